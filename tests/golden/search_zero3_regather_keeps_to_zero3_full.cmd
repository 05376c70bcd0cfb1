search -m llama8b -n 64 --zero3-recompute-regather --top 3
