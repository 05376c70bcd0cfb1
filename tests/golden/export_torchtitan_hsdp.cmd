export --framework torchtitan --model llama8b --gpus 64 --zero 3 --zero-shard 8
