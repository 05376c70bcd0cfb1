calibrate fit --measurements tests/golden/data/bad_measurements.json --base dgx-h100 -o tests/golden/data/never_written.json
