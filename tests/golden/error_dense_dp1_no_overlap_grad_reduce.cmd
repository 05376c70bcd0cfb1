evaluate -m llama70b -n 32 --tp 8 --pp 4 --no-overlap-grad-reduce
