calibrate check --profile dgx-h100 --measurements tests/data/calibration/synthetic_h100.json --summary --max-error 0.1
