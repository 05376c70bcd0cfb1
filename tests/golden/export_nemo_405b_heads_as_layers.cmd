export -m llama405b -n 1024 --global-batch 512 --tp 8 --pp 8 --cp 2 --vpp 8 --zero 1 --framework nemo
