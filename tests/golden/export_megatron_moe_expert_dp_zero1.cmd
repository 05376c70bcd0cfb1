export --framework megatron -m mixtral-8x7b -n 32 --tp 8 --pp 4 --ep 2 --zero 1 --recompute full
