evaluate -m mixtral-8x7b -n 64 --seq-len 4096 --global-batch 256 --pp 4 --ep 8 --recompute full --explain
