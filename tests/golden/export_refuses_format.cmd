export -m llama70b -n 64 --tp 8 --framework megatron --format json
