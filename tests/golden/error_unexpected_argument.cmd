evaluate --model llama8b --gpus 8 extra
