simulate -m llama8b -n 8 --torch-compile
