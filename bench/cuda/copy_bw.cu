// copy_bw.cu - The device's copy bandwidth, the yardstick of bench/cuda.
// SPDX-License-Identifier: Apache-2.0
//
// A grid-stride copy kernel (double, b[i] = a[i]) over two 1 GiB arrays,
// best of 20 after a warm-up; bytes counted as read + written (16 per
// element), as the runtime's profile counts loop traffic. Prints
//   device-copy n=134217728 best_s=0.000850 GBps=2526.00 device="NVIDIA H100"
#include "bench_cuda.cuh"

#include <cstdlib>

int main(int argc, char **argv) {
  bench::copy_bandwidth(argc > 1 ? std::atol(argv[1]) : (1L << 27));
  return 0;
}
