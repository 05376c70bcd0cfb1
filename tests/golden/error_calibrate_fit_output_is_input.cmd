calibrate fit -m tests/golden/data/spark_measured.json --base dgx-h100 -o tests/golden/data/spark_measured.json
