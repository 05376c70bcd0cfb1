evaluate --model tests/golden/data/bad_model.json --gpus 8
