calibrate fit --measurements tests/golden/data/sweep_from_32mib.json --base nosuch -o /tmp/planner_golden_fit_nosuch.json
