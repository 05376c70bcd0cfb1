evaluate --model llama8b --hardware b20 --gpus 8
