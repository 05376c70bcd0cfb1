evaluate --model llama405b --gpus 8 --html /tmp/planner_golden_does_not_fit.html
