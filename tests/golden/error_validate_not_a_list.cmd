validate --runs tests/golden/data/runs_not_a_list.json
