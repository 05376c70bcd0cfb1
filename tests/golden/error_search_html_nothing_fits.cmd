search --model llama405b --gpus 8 --top 2 --html /tmp/planner_golden_nothing_fits.html
