search -m llama70b -n 256 --framework megatron --tokens 15e12 --gpu-hour-cost 2 --top 5
