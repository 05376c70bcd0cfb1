search -m llama70b -n 64 --export nemo --top 2 --tokens 2e12
