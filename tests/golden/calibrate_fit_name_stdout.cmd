calibrate fit --measurements tests/golden/data/sweep_from_32mib.json --base dgx-h100 --name - -o /tmp/planner_golden_fit_name_dash.json
