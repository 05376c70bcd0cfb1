calibrate import-nccl-tests tests/data/nccl_tests/constructed_json_all_reduce.json --ranks-per-node 8x
