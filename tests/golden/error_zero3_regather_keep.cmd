evaluate --model llama8b --gpus 64 --zero 3 --recompute full --reshard-after-forward false --zero3-recompute-regather
