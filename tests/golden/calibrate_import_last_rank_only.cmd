calibrate import-nccl-tests tests/data/nccl_tests/constructed/all_reduce_nvl72_last_rank.log
