show deepseek-v3
