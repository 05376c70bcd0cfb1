evaluate --model llama70b --hardware dgx-a100-80gb --gpus 64 --zero 3 --recompute full --seq-len 8192 --global-batch 64 --grad-reduce-bytes 4
