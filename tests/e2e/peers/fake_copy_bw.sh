#!/bin/sh
# fake_copy_bw.sh - Stands in for bench/cuda/copy_bw in run.py's GPU tests
# (no GPU here): prints copy_bw's line with a fixed bandwidth.
echo 'device-copy n=134217728 best_s=0.000850 GBps=2500.00 device="stand-in GPU"'
