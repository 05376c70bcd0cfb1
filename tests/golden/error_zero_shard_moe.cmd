evaluate --model mixtral-8x7b --gpus 64 --ep 8 --zero 1 --zero-shard 8
