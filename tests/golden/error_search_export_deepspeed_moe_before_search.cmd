search -m qwen3-30b-a3b -n 64 --export deepspeed
