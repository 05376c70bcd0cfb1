evaluate --model llama8b --gpus 64 --zero 0 --zero-shard 8
