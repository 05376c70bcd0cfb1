calibrate import-nccl-tests tests/data/nccl_tests/constructed_json_all_reduce.json --collective all_reduce --collective all_gather
