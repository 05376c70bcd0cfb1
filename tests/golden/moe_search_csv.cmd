search -m mixtral-8x7b -n 64 --tp 2 --pp 1 --top 3 --format csv
