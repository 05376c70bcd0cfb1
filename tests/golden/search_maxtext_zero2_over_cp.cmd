search -m llama8b -n 64 --framework maxtext --cp 4 --pp 4 --zero 2 --top 3
