search -m llama405b -n 1000 --tp 8 --pp 1-64
