search --model llama70b --gpus 7
