evaluate --model llama8b --hardware dgx-h900 --gpus 8
