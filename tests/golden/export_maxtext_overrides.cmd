export -m llama70b -n 64 --tp 8 --pp 4 --vpp 2 --zero 1 --framework maxtext
