evaluate -m llama8b -n 64 --tp 2 --pp 2 --dp 16 --mbs 2 --global-batch 500
