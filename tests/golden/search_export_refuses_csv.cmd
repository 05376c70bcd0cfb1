search -m llama8b -n 64 --export megatron --format csv
