evaluate -m llama70b -n 256 --tp 8 --pp 4 --vpp 7 --zero 1 --tokens 15e12 --gpu-hour-cost 2.5
