export --framework megatron -m llama8b -n 64 --tp 2 --zero 1 --te-cross-entropy
