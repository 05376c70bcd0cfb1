export --framework maxtext -m llama8b -n 64 --zero 3 --recompute selective
