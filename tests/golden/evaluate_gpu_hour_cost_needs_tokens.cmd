evaluate -m llama8b -n 64 --tp 2 --gpu-hour-cost 2
