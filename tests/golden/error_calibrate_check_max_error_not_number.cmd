calibrate check --profile dgx-h100 --measurements tests/data/calibration/synthetic_h100.json --max-error abc
