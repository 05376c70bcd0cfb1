calibrate check --profile dgx-h100 -m tests/golden/data/xxrjun_cluster01_10x8_h100.json --summary --algo tree
