evaluate -m llama8b -n 7 --tp 4 --pp 2 --dp 8
