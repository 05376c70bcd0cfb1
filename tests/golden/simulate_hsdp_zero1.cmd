simulate --model llama70b --gpus 1024 --global-batch 512 --tp 8 --pp 4 --vpp 5 --zero 1 --zero-shard 4
