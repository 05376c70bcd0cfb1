import-hf tests/data/hf/qwen2.5-72b.json
