simulate --model llama8b --gpus 32 --tp 2 --pp 4 --dp 4 --global-batch 32 --ascii --format csv
