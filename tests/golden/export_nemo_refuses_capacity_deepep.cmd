export --framework nemo -m mixtral-8x7b -n 64 --ep 8 --recompute full --capacity-factor 1.25 --a2a deepep --zero 1
