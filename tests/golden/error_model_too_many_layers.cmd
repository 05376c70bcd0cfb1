evaluate --model tests/golden/data/too_many_layers.json --gpus 8
