simulate -m mixtral-8x7b -n 32 --pp 4 --ep 8 --seq-len 4096 --global-batch 128
