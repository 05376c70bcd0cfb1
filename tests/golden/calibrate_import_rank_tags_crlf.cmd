calibrate import-nccl-tests tests/data/nccl_tests/constructed/all_gather_2x8_rank_tags_crlf.log
