evaluate -m llama8b -n 64 --tp 2 --zero 1 --html no-such-dir/e.html
