calibrate import-nccl-tests tests/data/nccl_tests/constructed/all_reduce_128_ranks_dots.log --ranks 99999999999999999999
