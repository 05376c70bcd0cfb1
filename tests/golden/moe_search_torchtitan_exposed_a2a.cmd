search -m mixtral-8x7b -n 64 --framework torchtitan --top 3
