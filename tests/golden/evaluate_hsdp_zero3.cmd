evaluate --model llama70b --gpus 256 --global-batch 256 --tp 1 --dp 256 --recompute full --zero 3 --zero-shard 32
