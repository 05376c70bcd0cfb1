search -m llama70b --hardware tpu-v5e-256 -n 16 --top 3
