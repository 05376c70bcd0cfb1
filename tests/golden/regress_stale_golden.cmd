regress --suite tests/golden/data/regress_suite.json --golden tests/golden/data/regress_golden_stale.json
