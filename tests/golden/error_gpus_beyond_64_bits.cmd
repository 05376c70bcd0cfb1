search --model llama8b -n 99999999999999999999
