simulate -m llama8b -n 32 --tp 2 --pp 4 --global-batch 32 --trace tests/golden/never_written.json --svg /nonexistent_dir_planner/t.svg
