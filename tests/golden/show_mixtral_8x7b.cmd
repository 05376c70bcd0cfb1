show mixtral-8x7b
