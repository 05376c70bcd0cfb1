calibrate import-nccl-tests tests/data/nccl_tests/nccl_1435_all_gather_bf16.log
