evaluate -m mixtral-8x7b -n 32 --tp 8 --pp 4 --ep 8 --no-overlap-grad-reduce
