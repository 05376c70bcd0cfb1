search --model llama70b --gpus 1024 --pp 4 --top 5 --simulate-top 5
