search --model llama8b -n 8 --top -99999999999999999999
