validate --runs tests/golden/data/runs_small.json --max-median-error -1
