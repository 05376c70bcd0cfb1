export --framework nemo -m deepseek-v3 --hardware gb200 -n 256 --seq-len 4096 --global-batch 4096 --pp 4 --vpp 4 --ep 64 --zero 1 --a2a deepep --recompute-modules mla_up_proj
