export --framework deepspeed -m llama8b -n 64 --zero 3 --zero-shard 8
