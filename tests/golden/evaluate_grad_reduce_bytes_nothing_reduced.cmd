evaluate -m llama8b -n 8 --tp 8 --grad-reduce-bytes 4
