calibrate fit --measurements tests/golden/data/sweep_from_32mib.json --base dgx-h100 -o /tmp/planner_golden_fit_dir/-.json
