export -m llama70b -n 64 --tp 8 --pp 4 --zero 3 --reshard-after-forward false --framework megatron
