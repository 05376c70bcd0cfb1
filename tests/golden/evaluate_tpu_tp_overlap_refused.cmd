evaluate -m llama8b --hardware tpu-v5p -n 256 --tp 4 --tp-overlap
