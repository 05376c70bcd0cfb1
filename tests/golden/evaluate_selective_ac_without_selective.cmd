evaluate -m llama8b -n 64 --zero 3 --selective-ac op
