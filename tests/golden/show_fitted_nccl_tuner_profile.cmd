show tests/golden/data/fitted_nccl_tuner.json
