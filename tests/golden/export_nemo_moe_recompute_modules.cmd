export --framework nemo -m deepseek-v3 --hardware h800 -n 2048 --pp 16 --ep 64 --zero 1 --recompute-modules layernorm,mla_up_proj,moe_act --a2a deepep --overlap-a2a true
