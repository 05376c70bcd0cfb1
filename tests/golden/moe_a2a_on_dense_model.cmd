evaluate -m llama3.1-8b -n 8 --a2a deepep
