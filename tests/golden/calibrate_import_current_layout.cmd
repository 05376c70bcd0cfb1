calibrate import-nccl-tests tests/data/nccl_tests/spark_playbooks_103_all_reduce.log
