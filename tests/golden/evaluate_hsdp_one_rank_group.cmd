evaluate --model llama8b --gpus 64 --zero 1 --zero-shard 1
