calibrate import-nccl-tests tests/data/nccl_tests/aws_ofi_nccl_65_all_reduce_old_layout.log --collective all_reduce --ranks 16 --ranks-per-node 8
