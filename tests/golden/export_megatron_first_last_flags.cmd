export -m llama405b -n 16384 --tp 8 --pp 16 --zero 1 --recompute full --framework megatron
