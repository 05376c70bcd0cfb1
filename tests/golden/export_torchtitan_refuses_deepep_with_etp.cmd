export --framework torchtitan -m llama4-scout -n 64 --ep 16 --etp 2 --tp 2 --dp 32 --zero 3 --recompute full --a2a deepep
