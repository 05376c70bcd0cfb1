search -m llama8b -n 64 --pipeline-model-parallel-size 2
