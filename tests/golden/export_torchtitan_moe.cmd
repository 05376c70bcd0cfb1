export -m mixtral-8x7b -n 64 --framework torchtitan --tp 2 --ep 8 --etp 2 --dp 32 --zero 3 --mbs 2
