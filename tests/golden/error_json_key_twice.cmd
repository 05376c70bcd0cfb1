evaluate --model tests/data/duplicate_key_model.json --gpus 8
