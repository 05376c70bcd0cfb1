evaluate -m llama8b -n 24 --tp 3 --format csv
