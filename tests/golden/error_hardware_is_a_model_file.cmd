evaluate --model llama8b --gpus 8 --hardware models/llama3.1-8b.json
