export --framework megatron -m llama70b -n 64 --tp 8 --zero 3 --reshard-after-forward false
