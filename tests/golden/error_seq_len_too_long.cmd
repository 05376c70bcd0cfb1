evaluate --model llama8b --gpus 8 --seq-len 100000001
