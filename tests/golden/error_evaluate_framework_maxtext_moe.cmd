evaluate --framework maxtext -m mixtral-8x7b -n 64 --ep 1 --zero 3 --recompute full
