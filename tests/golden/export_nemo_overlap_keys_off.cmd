export --framework nemo -m llama70b -n 64 --tp 8 --pp 2 --zero 1 --no-overlap-grad-reduce
