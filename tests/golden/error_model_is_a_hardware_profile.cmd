evaluate --model hardware_profiles/dgx-h100.json --gpus 8
