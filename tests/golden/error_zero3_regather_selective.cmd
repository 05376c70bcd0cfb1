search --model llama8b --gpus 64 --recompute selective --zero3-recompute-regather
