show tests/golden/data/bad_moe_top_k.json
