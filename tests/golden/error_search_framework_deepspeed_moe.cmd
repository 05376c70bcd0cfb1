search -m mixtral-8x7b -n 64 --framework deepspeed --top 3
