calibrate import-nccl-tests tests/data/nccl_tests/constructed_json_all_reduce.json --nodes-per-nvlink-domain 1.5
