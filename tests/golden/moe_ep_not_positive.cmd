search -m llama3.1-8b -n 8 --ep 0
