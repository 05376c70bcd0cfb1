export --framework megatron -m mixtral-8x7b -n 64 --ep 8 --zero 3 --reshard-after-forward false --recompute full
