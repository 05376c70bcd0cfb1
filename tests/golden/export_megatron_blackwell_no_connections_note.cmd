export --framework megatron -m llama70b --hardware dgx-b200 -n 64 --tp 8 --zero 1
