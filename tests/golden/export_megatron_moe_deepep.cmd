export --framework megatron -m deepseek-v3 --hardware gb200 -n 256 --seq-len 4096 --global-batch 4096 --dtype fp8 --pp 4 --vpp 4 --ep 64 --recompute full --zero 1 --a2a deepep --overlap-a2a true
