evaluate --model llama8b --gpus 64 --torch-compile
