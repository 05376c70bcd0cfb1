evaluate -m llama405b -n 2048 --tp 1 --pp 16 --zero 1 --recompute full --framework deepspeed
