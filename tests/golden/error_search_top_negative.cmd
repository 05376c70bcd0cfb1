search -m llama8b -n 64 --top -1
