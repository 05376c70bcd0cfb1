search -m mixtral-8x7b -n 64 --ep 3,5
