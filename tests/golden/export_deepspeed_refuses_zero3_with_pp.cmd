export -m llama70b -n 64 --tp 8 --pp 2 --zero 3 --framework deepspeed
