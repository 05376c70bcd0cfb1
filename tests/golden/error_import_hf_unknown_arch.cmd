import-hf tests/golden/data/hf_unknown_arch.json
