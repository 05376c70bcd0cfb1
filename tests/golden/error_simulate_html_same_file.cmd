simulate -m llama8b -n 32 --tp 2 --pp 4 --global-batch 32 --svg t.html --html t.html
