search --model llama8b --gpus 64 --top 5
