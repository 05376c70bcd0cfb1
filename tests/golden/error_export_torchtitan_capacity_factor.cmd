export --framework torchtitan -m mixtral-8x7b -n 64 --ep 8 --capacity-factor 1.25 --zero 3
