evaluate -m llama8b --hardware dgx-a100-80gb -n 64 --seq-len 8192 --global-batch 64 --zero 3 --recompute selective --selective-ac op
