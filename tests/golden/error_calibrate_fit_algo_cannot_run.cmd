calibrate fit --measurements tests/golden/data/xxrjun_cluster01_1x8_h100.json --base dgx-h100 -o tests/golden/data/never_written.json --algo tree
