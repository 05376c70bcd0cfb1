evaluate -m mixtral-8x7b --hardware mi300x -n 64 --ep 8 --a2a deepep
