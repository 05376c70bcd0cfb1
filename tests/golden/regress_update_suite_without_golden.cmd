regress --suite tests/golden/data/regress_suite.json --update
