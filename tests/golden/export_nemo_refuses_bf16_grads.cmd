export --framework nemo -m llama8b -n 64 --tp 2 --zero 1 --grad-bytes 2
