serach --model llama8b --gpus 64
