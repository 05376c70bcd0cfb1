evaluate -m mixtral-8x7b -n 64 --a2a deepep
