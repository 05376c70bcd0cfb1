export -m llama70b -n 64 --tp 8 --cp 2 --zero 3 --framework maxtext
