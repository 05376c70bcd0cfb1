calibrate import-nccl-tests tests/data/nccl_tests/constructed/all_to_all_2x8_failed_at_512MiB.log
