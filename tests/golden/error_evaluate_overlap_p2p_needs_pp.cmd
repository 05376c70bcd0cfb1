evaluate -m llama8b -n 8 --overlap-p2p
