export --framework torchtitan -m llama3.1-8b -n 64 --tp 1 --pp 1 --zero 3 --te-cross-entropy
