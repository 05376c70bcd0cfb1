export --framework megatron -m megatron-gpt-22b -n 64 --tp 8 --zero 3 --reshard-after-forward false --global-batch 64
