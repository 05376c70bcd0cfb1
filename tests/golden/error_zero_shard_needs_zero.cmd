evaluate --model llama8b --gpus 64 --zero-shard 8
