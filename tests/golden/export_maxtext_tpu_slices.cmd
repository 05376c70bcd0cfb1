export -m llama8b -n 512 --hardware tpu-v5e-256 --tp 4 --zero 3 --framework maxtext --recompute full
