search -m llama8b -n 64 --framework maxtext --top 3
