evaluate -m deepseek-v3 -n 256 --recompute selective --selective-ac op
