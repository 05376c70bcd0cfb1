evaluate -m llama8b -n 64 --tp 4,8
