calibrate check --profile dgx-h100 -m tests/golden/data/a2a_only_10x8.json --algo ring
