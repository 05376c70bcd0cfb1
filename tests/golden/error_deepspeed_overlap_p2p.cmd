evaluate --framework deepspeed -m llama70b -n 128 --tp 1 --pp 4 --zero 1 --overlap-p2p
