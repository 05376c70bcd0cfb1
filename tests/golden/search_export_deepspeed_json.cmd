search -m llama8b -n 64 --export deepspeed --top 2 --format json
