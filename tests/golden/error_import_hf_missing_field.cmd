import-hf tests/golden/data/hf_missing_field.json
