evaluate -m llama8b -n 64 --tp 2 --zero 1 --tokens 15e12 --format json --framework megatron
