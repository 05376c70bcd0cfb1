validate --runs tests/golden/data/runs_small.json --hardware ZZZ=dgx-h100
