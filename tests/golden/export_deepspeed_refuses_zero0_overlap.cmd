export --framework deepspeed -m megatron-gpt-1.7b -n 16 --zero 0
