search -m llama8b -n 8 --tp 8 --top 5
