export --framework megatron -m llama70b -n 64 --tp 8 --pp 2 --vpp 2 --zero 1
