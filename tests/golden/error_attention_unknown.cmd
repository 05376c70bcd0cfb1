evaluate -m llama8b -n 8 --attention flash3
