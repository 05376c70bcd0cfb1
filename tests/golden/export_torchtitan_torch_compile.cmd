export --framework torchtitan --torch-compile -m llama8b -n 64 --hardware dgx-a100-80gb --seq-len 8192 --global-batch 64 --tp 1 --pp 1 --cp 1 --mbs 1 --zero 3 --recompute selective --selective-ac op
