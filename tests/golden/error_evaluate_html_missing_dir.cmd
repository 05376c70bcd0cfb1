evaluate -m llama8b -n 64 --tp 2 --html no-such-dir/e.html
