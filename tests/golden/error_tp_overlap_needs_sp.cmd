evaluate --model llama8b --gpus 64 --tp 2 --sp false --tp-overlap
