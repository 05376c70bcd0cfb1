evaluate --model llama8b --gpus 16777216 --tp 16777216 --cp 16777216 --pp 16777216
