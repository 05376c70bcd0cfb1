validate --runs tests/golden/data/runs_empty.json --format json
