search --model llama8b --gpus 8 --top abc
