evaluate -m llama8b -n 8 --explain --format csv
