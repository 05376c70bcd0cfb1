search --model llama8b --gpus 64 --zero-shard 8,16 --top 5
