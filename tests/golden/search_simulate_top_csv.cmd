search --model llama70b --gpus 1024 --pp 4 --top 3 --simulate-top 5 --format csv
