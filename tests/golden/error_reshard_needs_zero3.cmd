evaluate --model llama8b --gpus 64 --zero 1 --reshard-after-forward false
