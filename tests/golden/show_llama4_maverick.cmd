show llama4-maverick
