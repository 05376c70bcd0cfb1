calibrate import-nccl-tests tests/data/nccl_tests/constructed/reduce_scatter_units_only.log --collective reduce_scatter --ranks-per-node 8
