validate --runs tests/golden/data/runs_small.json --max-error nan
