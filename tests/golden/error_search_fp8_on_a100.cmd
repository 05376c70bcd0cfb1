search -m llama8b -n 64 --hardware a100 --dtype fp8
