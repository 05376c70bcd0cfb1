calibrate fit --measurements tests/golden/data/sweep_from_32mib.json --base dgx-h100 -o -
