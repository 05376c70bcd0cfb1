evaluate -m megatron-gpt-175b -n 64 --seq-len 4096 --tp 8 --pp 8
