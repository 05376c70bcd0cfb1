export -m llama70b -n 8 --tp 8 --framework megatron
