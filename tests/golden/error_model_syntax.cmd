evaluate --model tests/golden/data/bad_syntax.json --gpus 8
