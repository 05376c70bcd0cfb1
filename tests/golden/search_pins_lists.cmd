search -m llama8b -n 64 --tp 2,4 --zero 0,1 --pp 1-4 --top 5
