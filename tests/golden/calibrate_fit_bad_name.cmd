calibrate fit --measurements tests/golden/data/xxrjun_cluster01_10x8_h100.json --base dgx-h100 --name a/b -o /tmp/planner_golden_fit_badname.json
