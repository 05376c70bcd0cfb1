evaluate -m llama3.1-8b --hardware grand-teton-h100 -n 8 --seq-len 8192 --global-batch 16 --dp 8 --mbs 2 --zero 3 --recompute selective --framework torchtitan --attention flash2
