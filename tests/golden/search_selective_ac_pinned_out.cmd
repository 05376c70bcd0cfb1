search -m llama8b -n 64 --recompute none,full --selective-ac layer:2
