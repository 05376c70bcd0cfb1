validate --runs tests/golden/data/missing.json
