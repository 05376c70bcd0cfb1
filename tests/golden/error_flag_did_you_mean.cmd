search --model llama8b --gpus 64 --tensor-parallel 4
