regress --suite tests/golden/data/bad_regress_suite.json
