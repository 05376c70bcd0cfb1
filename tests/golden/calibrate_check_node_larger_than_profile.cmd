calibrate check --profile gb200-nvl72 --measurements tests/golden/data/xxrjun_cluster01_10x8_h100.json
