#!/bin/sh
# fake_ops_cloverleaf.sh - Stands in for OPS's cloverleaf_openmp in
# clover_loops.py's test: reads clover.in from its working directory, as
# OPS's does, and prints OPS's PASSED line (unless FAKE_OPS_FAIL is set)
# and a few rows of its -OPS_DIAGS=2 kernel table.
test -f clover.in || { echo "clover.in: not found" >&2; exit 1; }
echo " Step 87 time   0.1 control sound timestep  1.0E-03  1, 1 x  1.0E-01  y 1.0E-01"
if [ -z "$FAKE_OPS_FAIL" ]; then
  echo "This test is considered PASSED"
fi
echo "Name                                Count Time     MPI-time     Bandwidth(GB/s)"
echo "advec_mom_kernel1_x_nonvector       174   0.174000 (0.000000) 0.000100 (0.000000)  8.18"
echo "advec_cell_kernel3_xdir             87    0.087000 (0.000000) 0.000100 (0.000000)  5.56"
echo "advec_cell_kernel4_xdir             87    0.174000 (0.000000) 0.000100 (0.000000)  9.98"
echo "Total kernel time: 0.435"
echo "Total Wall time 0.500000"
