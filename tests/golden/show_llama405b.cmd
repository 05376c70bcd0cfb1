show llama405b
