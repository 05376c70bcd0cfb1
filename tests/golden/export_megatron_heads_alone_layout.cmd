export -m llama405b -n 16384 --tp 8 --cp 2 --pp 16 --vpp 8 --zero 1 --framework megatron
