evaluate --model llama8b --gpus 64 --zero 1 --recompute full --zero3-recompute-regather
