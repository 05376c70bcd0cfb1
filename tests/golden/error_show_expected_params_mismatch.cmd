show tests/golden/data/expected_params_off.json
