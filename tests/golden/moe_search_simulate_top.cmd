search -m mixtral-8x7b -n 64 --seq-len 4096 --global-batch 256 --top 3 --simulate-top 3
