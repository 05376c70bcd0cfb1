export -m llama70b -n 64 --tp 8 --pp 4 --vpp 3 --zero 1 --framework maxtext
