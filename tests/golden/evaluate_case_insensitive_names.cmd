evaluate -m LLAMA8B -n 64 --hardware H100 --tp 2
