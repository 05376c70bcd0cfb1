calibrate import-nccl-tests tests/data/nccl_tests/nccl_tests_355_alltoall_failed.log
