evaluate --model llama8b --gpus 64 --zero 3 --grad-reduce-bytes -1
