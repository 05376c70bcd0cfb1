calibrate check --profile nosuch --measurements tests/data/calibration/synthetic_h100.json
