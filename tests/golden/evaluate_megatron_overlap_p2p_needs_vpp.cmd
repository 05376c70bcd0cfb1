evaluate -m llama8b -n 8 --tp 2 --pp 4 --global-batch 64 --framework megatron --overlap-p2p
