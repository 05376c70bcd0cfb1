show grand-teton-h100
