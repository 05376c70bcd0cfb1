export -m llama70b -n 256 --tp 8 --pp 4 --vpp 2 --zero 1 --framework megatron --tp-overlap --recompute full
