evaluate --model llama8b --gpus 8 --loss-kernel flash-attn --framework megatron
