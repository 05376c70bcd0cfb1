evaluate -m llama8b -n 8 --tp 1 --sp true
