search --model llama405b --gpus 1048576 --top 3
