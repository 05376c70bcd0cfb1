evaluate --model llama8b --gpus 64 --tp 2 --zero 3 --zero-shard 64
