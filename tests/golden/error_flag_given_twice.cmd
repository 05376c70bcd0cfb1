evaluate --model llama8b --gpus 8 --tp 4 --tp 8
