evaluate -m llama8b -n 8 --tp 2 --explain --format json
