validate --runs tests/golden/data/runs_small.json --hardware A100
