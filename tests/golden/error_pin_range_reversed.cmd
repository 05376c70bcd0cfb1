search -m llama8b -n 64 --pp 16-1
