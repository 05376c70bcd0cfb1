calibrate fit --base dgx-h100 -o /tmp/planner_golden_fit_no_m.json
