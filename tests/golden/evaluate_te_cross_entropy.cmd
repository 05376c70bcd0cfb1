evaluate -m llama3.1-8b -n 64 --tp 2 --zero 1 --dtype fp8 --te-cross-entropy
