search -m mixtral-8x7b -n 64 --ep 1-8 --top 2
