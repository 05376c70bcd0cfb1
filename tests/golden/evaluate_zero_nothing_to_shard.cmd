evaluate -m llama8b -n 8 --tp 8 --zero 1
