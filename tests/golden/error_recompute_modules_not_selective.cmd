evaluate -m llama3.1-8b -n 8 --recompute full --recompute-modules layernorm
