search -m deepseek-v3 -n 2048 --hardware h800 --top 10
