export --framework maxtext -m llama8b -n 512 --tp 8 --cp 32 --pp 2 --global-batch 10 --seq-len 131072 --recompute full
