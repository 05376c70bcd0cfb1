search --model tests/golden/data/deep_10000_layers.json --gpus 1024 --top 3
