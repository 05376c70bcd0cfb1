evaluate -m llama8b -n 64 --tp 2 --pp 2 --vpp 4 --schedule 1f1b
