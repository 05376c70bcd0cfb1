evaluate --gpus 8
