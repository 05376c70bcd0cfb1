evaluate -m mixtral-8x7b -n 64 --tp 2 --ep 8 --sp false
