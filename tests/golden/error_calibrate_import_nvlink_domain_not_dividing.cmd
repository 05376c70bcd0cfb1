calibrate import-nccl-tests tests/data/nccl_logs/oci_gb300_32x4_all_reduce.log --nodes-per-nvlink-domain 5
