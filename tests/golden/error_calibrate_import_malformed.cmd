calibrate import-nccl-tests tests/data/nccl_tests/malformed/missing_column.log
