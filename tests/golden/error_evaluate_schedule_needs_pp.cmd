evaluate -m llama8b -n 8 --schedule gpipe
