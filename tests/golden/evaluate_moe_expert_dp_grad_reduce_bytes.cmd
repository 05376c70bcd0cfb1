evaluate -m mixtral-8x7b -n 32 --tp 8 --pp 4 --ep 1 --zero 1 --recompute full --grad-reduce-bytes 4
