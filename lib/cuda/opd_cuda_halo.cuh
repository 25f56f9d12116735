/* opd_cuda_halo.cuh - The device side of MPI halo exchanges: packing and
 * unpacking halo elements and boxes of device copies, and releasing the
 * copies when the runtime moves the mesh.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Part of the CUDA runtime header (lib/cuda/opd_cuda.cuh, which includes it
 * after the device copies; generated code includes only opd_cuda.cuh).
 * Apart from the rest because only the runtime's hooks (init) call it,
 * never a generated loop.
 */
#ifndef OPD_CUDA_HALO_CUH
#define OPD_CUDA_HALO_CUH

#ifndef OPD_CUDA_CUH
#error "opd_cuda_halo.cuh is part of opd_cuda.cuh: include that instead"
#endif

namespace opd {

/*===-- Halo exchanges (MPI) ---------------------------------------------===*/

/* On several ranks the runtime decides every exchange and sends through
 * host buffers (host staging; lib/core/Device.cpp); these hooks move the
 * bytes. A dat whose device copy is newer is packed on the device (a
 * gather kernel into device scratch memory, one copy of the packed values
 * to the runtime's buffer), and received values are scattered into the
 * device copy (one copy of the buffer up, a scatter kernel), so a whole
 * dat never crosses for an exchange. Set dats: the runtime's element lists
 * (uploaded once per list: they are fixed from the partition on); block
 * dats: boxes of the local storage. */

__host__ __device__ inline void move_word(char *to, const char *from,
                                          int32_t bytes) {
  switch (bytes) {
  case 8:
    *reinterpret_cast<uint64_t *>(to) =
        *reinterpret_cast<const uint64_t *>(from);
    return;
  case 4:
    *reinterpret_cast<uint32_t *>(to) =
        *reinterpret_cast<const uint32_t *>(from);
    return;
  default:
    for (int32_t b = 0; b < bytes; ++b)
      to[b] = from[b];
  }
}

/** Between the listed elements of a set dat's device copy (n elements,
 *  SoA or AoS) and a packed buffer (element-contiguous); unpack: into the
 *  copy. */
static __global__ void move_elems(char *dev, int64_t n, int32_t dim,
                                  int32_t bytes, int soa, const int32_t *elems,
                                  int64_t count, char *buf, int unpack) {
  const int64_t total = count * dim;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += int64_t(gridDim.x) * blockDim.x) {
    const int64_t e = elems[t / dim], k = t % dim;
    char *d = dev + (soa ? k * n + e : e * dim + k) * bytes;
    char *b = buf + t * bytes;
    if (unpack)
      move_word(d, b, bytes);
    else
      move_word(b, d, bytes);
  }
}

/** The same for a box of a block dat's device copy (the host's layout). */
static __global__ void move_box(char *dev, opd_box box, int32_t dim,
                                int32_t bytes, char *buf, int unpack) {
  const int64_t points = box.count[0] * box.count[1] * box.count[2];
  const int64_t total = points * dim;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += int64_t(gridDim.x) * blockDim.x) {
    const int64_t p = t / dim, k = t % dim;
    const int64_t i = p % box.count[0], j = (p / box.count[0]) % box.count[1];
    const int64_t l = p / (box.count[0] * box.count[1]);
    const int64_t e =
        box.offset + i * box.stride[0] + j * box.stride[1] + l * box.stride[2];
    char *d = dev + (e * dim + k) * bytes;
    char *b = buf + t * bytes;
    if (unpack)
      move_word(d, b, bytes);
    else
      move_word(b, d, bytes);
  }
}

/** Device scratch memory for one packed message at a time. */
inline char *halo_scratch(size_t bytes) {
  static DeviceBuffer buf;
  return static_cast<char *>(buf.reserve(bytes, "halo buffers"));
}

/** Device copies of the runtime's element lists, by host address. */
struct List {
  int32_t *dev = nullptr;
  int64_t n = 0;
};
inline std::unordered_map<const int32_t *, List> &lists() {
  static std::unordered_map<const int32_t *, List> all;
  return all;
}
inline const int32_t *device_list(const int32_t *host, int64_t n) {
  List &l = lists()[host];
  if (n > l.n) {
    if (l.dev)
      check(cudaFree(l.dev), "freeing a halo list");
    check(cudaMalloc(&l.dev, size_t(n) * sizeof(int32_t)),
          "allocating a halo list");
    check(cudaMemcpy(l.dev, host, size_t(n) * sizeof(int32_t),
                     cudaMemcpyHostToDevice),
          "uploading a halo list");
    l.n = n;
  }
  return l.dev;
}

/** The device copy of a dat if it takes part: to pack, one newer than host
 *  memory; to unpack into, any not about to be replaced from the host. */
inline Copy *copy_of(opd_dat *dat, bool pack) {
  auto it = copies().find(opd_dat_data(dat));
  if (it == copies().end())
    return nullptr;
  const int s = it->second.state;
  return (pack ? s == DeviceNewer : s != HostNewer) ? &it->second : nullptr;
}

inline int pack(opd_dat *dat, const int32_t *elems, int64_t n, void *buf) {
  Copy *c = copy_of(dat, true);
  if (!c)
    return 0;
  const size_t bytes = size_t(n) * size_t(c->dim) * size_t(c->bytes);
  char *s = halo_scratch(bytes);
  const int32_t *l = device_list(elems, n);
  char *d = static_cast<char *>(c->dev);
  const unsigned g = copy_grid(n * c->dim);
  // One line a launch: tests/cuda/emulate.py rewrites launches line by line.
  // clang-format off
  move_elems<<<g, OPD_CUDA_COPY_THREADS>>>(d, c->n, c->dim, c->bytes, c->soa, l, n, s, 0);
  // clang-format on
  check(cudaGetLastError(), "packing a halo");
  check(cudaMemcpy(buf, s, bytes, cudaMemcpyDeviceToHost), "packing a halo");
  return 1;
}

inline void unpack(opd_dat *dat, const int32_t *elems, int64_t n,
                   const void *buf) {
  Copy *c = copy_of(dat, false);
  if (!c)
    return;
  const size_t bytes = size_t(n) * size_t(c->dim) * size_t(c->bytes);
  char *s = halo_scratch(bytes);
  check(cudaMemcpy(s, buf, bytes, cudaMemcpyHostToDevice), "unpacking a halo");
  const int32_t *l = device_list(elems, n);
  char *d = static_cast<char *>(c->dev);
  const unsigned g = copy_grid(n * c->dim);
  // One line a launch: tests/cuda/emulate.py rewrites launches line by line.
  // clang-format off
  move_elems<<<g, OPD_CUDA_COPY_THREADS>>>(d, c->n, c->dim, c->bytes, c->soa, l, n, s, 1);
  // clang-format on
  check(cudaGetLastError(), "unpacking a halo");
}

inline size_t box_bytes(const opd_box *b, const Copy &c) {
  return size_t(b->count[0] * b->count[1] * b->count[2]) * size_t(c.dim) *
         size_t(c.bytes);
}

inline int pack_box(opd_dat *dat, const opd_box *box, void *buf) {
  Copy *c = copy_of(dat, true);
  if (!c)
    return 0;
  const size_t bytes = box_bytes(box, *c);
  char *s = halo_scratch(bytes);
  char *d = static_cast<char *>(c->dev);
  const unsigned g = copy_grid(int64_t(bytes) / c->bytes);
  move_box<<<g, OPD_CUDA_COPY_THREADS>>>(d, *box, c->dim, c->bytes, s, 0);
  check(cudaGetLastError(), "packing a halo");
  check(cudaMemcpy(buf, s, bytes, cudaMemcpyDeviceToHost), "packing a halo");
  return 1;
}

inline void unpack_box(opd_dat *dat, const opd_box *box, const void *buf) {
  Copy *c = copy_of(dat, false);
  if (!c)
    return;
  const size_t bytes = box_bytes(box, *c);
  char *s = halo_scratch(bytes);
  check(cudaMemcpy(s, buf, bytes, cudaMemcpyHostToDevice), "unpacking a halo");
  char *d = static_cast<char *>(c->dev);
  const unsigned g = copy_grid(int64_t(bytes) / c->bytes);
  move_box<<<g, OPD_CUDA_COPY_THREADS>>>(d, *box, c->dim, c->bytes, s, 1);
  check(cudaGetLastError(), "unpacking a halo");
}

/** The runtime moves the mesh (the partition, renumbering): newer device
 *  values back to the host, then every device copy goes. */
inline void release() {
  for (auto &[host, c] : copies()) {
    if (c.state == DeviceNewer)
      download(const_cast<void *>(host), c);
    check(cudaFree(c.dev), "freeing a device copy");
  }
  copies().clear();
  for (auto &[host, l] : lists())
    check(cudaFree(l.dev), "freeing a halo list");
  lists().clear();
}

} // namespace opd
#endif
