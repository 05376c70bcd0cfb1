search -m llama8b -n 64 --export torchtitan --top 3
