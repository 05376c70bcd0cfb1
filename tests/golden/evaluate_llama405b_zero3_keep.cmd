evaluate --model llama405b --gpus 16384 --tp 8 --pp 16 --vpp 4 --zero 3 --reshard-after-forward false
