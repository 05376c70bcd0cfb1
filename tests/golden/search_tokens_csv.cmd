search -m llama8b -n 64 --tokens 1e12 --top 3 --format csv
