evaluate -m llama8b -n 64 --recompute selective --selective-ac layer:0
