evaluate --model llama8b --hardware tests/golden/data/h100_units_typo.json --gpus 8
