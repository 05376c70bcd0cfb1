simulate --model llama70b --gpus 64 --tp 4 --pp 4 --dp 4 --vpp 2 --global-batch 24
