show deepseek-v3 --format json
