export --framework maxtext -m llama70b -n 64 --tp 8 --pp 4 --zero 1 --global-batch 20
