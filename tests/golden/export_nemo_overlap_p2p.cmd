export --framework nemo -m llama70b -n 128 --tp 8 --pp 4 --vpp 5 --mbs 1 --zero 1 --recompute full --global-batch 128 --overlap-p2p
