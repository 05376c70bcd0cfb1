evaluate --model llama8b --gpus 0
