evaluate --model llama8b --gpus -4
