export --framework torchtitan -m deepseek-v2 -n 64 --ep 16 --zero 3 --recompute full --a2a deepep
