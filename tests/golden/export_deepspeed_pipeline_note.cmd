export -m llama8b -n 64 --tp 1 --pp 2 --zero 1 --recompute full --framework deepspeed
