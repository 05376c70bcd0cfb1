evaluate -m llama8b -n 8 --global-batch-tokens 99999999999999999999
