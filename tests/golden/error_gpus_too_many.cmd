search --model llama8b --gpus 16777217
