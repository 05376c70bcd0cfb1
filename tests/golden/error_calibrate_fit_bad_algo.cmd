calibrate fit --measurements tests/golden/data/sweep_from_32mib.json --base dgx-h100 -o tests/golden/data/never_written.json --algo nvls
