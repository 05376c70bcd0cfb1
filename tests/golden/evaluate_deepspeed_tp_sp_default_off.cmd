evaluate --framework deepspeed -m llama8b -n 64 --tp 2 --zero 1
