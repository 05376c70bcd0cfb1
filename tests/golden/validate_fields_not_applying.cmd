validate --runs tests/golden/data/runs_fields_not_applying.json
