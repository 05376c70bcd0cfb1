evaluate -m llama8b --hardware tpu-v5e-256 -n 16 --tp 4 --pp 2 --vpp 2 --global-batch 6
