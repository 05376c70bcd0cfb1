export --framework torchtitan -m qwen3-30b-a3b -n 64 --ep 8 --zero 3 --recompute full --a2a deepep
