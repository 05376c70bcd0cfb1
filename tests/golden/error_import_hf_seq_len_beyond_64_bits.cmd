import-hf tests/data/hf/llama3.1-8b.json --seq-len 99999999999999999999
