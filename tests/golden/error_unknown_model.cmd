evaluate --model llama9b --gpus 8
