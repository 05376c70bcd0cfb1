validate --runs tests/golden/data/runs_small.json
