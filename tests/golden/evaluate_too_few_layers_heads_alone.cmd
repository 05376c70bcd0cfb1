evaluate -m llama405b -n 16384 --tp 8 --pp 16 --vpp 9
