evaluate -m llama3.1-8b -n 8 --moe-imbalance 0.5
