/* opd_cuda_tape.cuh - The adjoint's saved dats in device memory: the store
 * (opd_rt_adjoint_store) that the host runtime's tape and checkpoint plans
 * keep the CUDA backend's dats in.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The host runtime (lib/exec/Adjoint*.cpp) still decides what is saved
 * and when: the tape's order, the checkpoint schedule, the halo state. It
 * hands the values to this store, which keeps them where the dats are,
 * in device memory: a push or a snapshot is a device-to-device copy of
 * the dat's device copy (no round trip over PCIe, which bounded the
 * adjoint by the bus), and a pop or a snapshot's last restore hands the
 * entry's buffer to the dat's device copy (the CPU hands its storage
 * over the same way; the host storage, which keys the device copies,
 * stays where it is).
 *
 * Within a budget: `--device-tape-memory=MiB` or OPD_DEVICE_TAPE_MEMORY,
 * else half the device memory free when the first entry is saved (the
 * primal's dats are resident by then). Beyond it the least recently used
 * entries (for the tape: its oldest, which the reverse sweep needs last)
 * spill to pinned host memory on a stream of their own, so that the
 * kernels on the default stream go on meanwhile; an entry that finds no
 * room at all is copied to pinned host memory directly. Events order what
 * the two streams do to the same memory:
 *   - a spill reads an entry after the default stream wrote it (the side
 *     stream waits for an event recorded on the default stream);
 *   - a direct spill reads the dat, which later kernels overwrite (the
 *     default stream waits for the copy);
 *   - a restore reads what the side stream wrote (the default stream
 *     waits for the entry's `ready` event);
 *   - a buffer freed into a pool carries an event of its last use, which
 *     the stream that takes it next waits for.
 * The host never touches pinned memory itself, so it waits for nothing.
 * Spilled tape entries come back ahead of their pop (the runtime asks for
 * the next two at each pop, a snapshot's at the restore before it) when
 * the budget has room, on the side stream, while the reverse sweep's
 * kernels run.
 *
 * An entry keeps the device copy's layout (SoA or AoS) byte for byte; a
 * dat with no current device copy (its host storage newer, or never on the
 * device) is kept in the host's layout and restored into host storage.
 */
#ifndef OPD_CUDA_TAPE_CUH
#define OPD_CUDA_TAPE_CUH

#include <map>
#include <utility>

namespace opd {
namespace tape {

/** Device or pinned host memory of a pool. `stream`: the stream of its
 *  last use; `ev`, recorded there when the buffer went back to the pool,
 *  marks the end of that use. */
struct Buf {
  void *p = nullptr;
  size_t bytes = 0;
  cudaEvent_t ev = nullptr;
  cudaStream_t stream = nullptr;
  bool used = false;
};

/** Buffers by exact size (a tape holds the same dats step after step),
 *  reused without a new allocation: cudaMalloc and cudaMallocHost
 *  synchronise the device, and pinning pages is slow. */
struct Pool {
  bool device = true;
  std::multimap<size_t, Buf> free;
  size_t held = 0; /* every byte allocated, in use or free */

  /** A buffer of `bytes` for work on stream `s`, which waits for the
   *  buffer's last use on another stream; null when a new one would pass
   *  `limit` bytes held. */
  Buf get(size_t bytes, cudaStream_t s, size_t limit = SIZE_MAX) {
    auto it = free.find(bytes);
    if (it != free.end()) {
      Buf b = it->second;
      free.erase(it);
      if (b.used && b.stream != s)
        check(cudaStreamWaitEvent(s, b.ev, 0), "ordering the device tape");
      b.stream = s;
      return b;
    }
    Buf b;
    if (held + bytes > limit)
      return b;
    b.bytes = bytes;
    b.stream = s;
    check(device ? cudaMalloc(&b.p, bytes ? bytes : 1)
                 : cudaMallocHost(&b.p, bytes ? bytes : 1),
          device ? "allocating the device tape" : "pinning host memory");
    held += bytes;
    return b;
  }
  /** `b` is free once stream `s`'s work so far is done. */
  void put(Buf b, cudaStream_t s) {
    if (!b.p)
      return;
    if (!b.ev)
      check(cudaEventCreateWithFlags(&b.ev, cudaEventDisableTiming),
            "creating an event");
    check(cudaEventRecord(b.ev, s), "ordering the device tape");
    b.stream = s;
    b.used = true;
    free.emplace(b.bytes, b);
  }
  /** Frees pooled buffers until `held` is at most `target` (cudaFree and
   *  cudaFreeHost wait for the device). */
  void trim(size_t target) {
    for (auto it = free.begin(); held > target && it != free.end();) {
      check(device ? cudaFree(it->second.p) : cudaFreeHost(it->second.p),
            "freeing the device tape");
      if (it->second.ev)
        cudaEventDestroy(it->second.ev);
      held -= it->second.bytes;
      it = free.erase(it);
    }
  }
};

struct Entry {
  Buf dev, host; /* the values on the device, in pinned host memory */
  size_t bytes = 0;
  Copy layout;             /* the device copy's shape (n, dim, bytes, soa) */
  bool hostLayout = false; /* saved from host storage */
  /* The last side-stream copy of this entry (a spill: `host` written; a
   * fetch: `dev` written); `pending` until the default stream waited. */
  cudaEvent_t ready = nullptr;
  bool pending = false;
  uint64_t use = 0; /* when last saved, fetched or restored */
};

struct Store {
  Pool dev, host;
  cudaStream_t side = nullptr;
  int64_t budget = -1;
  uint64_t clock = 0;
  std::map<uint64_t, Entry *> lru; /* entries with `dev`, by use */
  int64_t onDevice = 0, onHost = 0;
  int64_t devicePeak = 0, hostPeak = 0, spilled = 0, fetched = 0;

  Store() { host.device = false; }

  void start() {
    if (budget >= 0)
      return;
    budget = opd_rt_device_tape_memory();
    if (budget < 0) {
      size_t freeBytes = 0, total = 0;
      check(cudaMemGetInfo(&freeBytes, &total), "reading the free memory");
      budget = int64_t(freeBytes / 2);
    }
    check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking),
          "creating the device tape's stream");
  }

  /* e's buffers change hands only here, so that the counts and the LRU
   * order stay right. */
  void setDev(Entry *e, Buf b) {
    if (e->dev.p) {
      lru.erase(e->use);
      onDevice -= int64_t(e->bytes);
    }
    e->dev = b;
    if (b.p) {
      e->use = ++clock;
      lru[e->use] = e;
      onDevice += int64_t(e->bytes);
      devicePeak = std::max(devicePeak, onDevice);
    }
  }
  void setHost(Entry *e, Buf b) {
    if (e->host.p)
      onHost -= int64_t(e->bytes);
    e->host = b;
    if (b.p) {
      onHost += int64_t(e->bytes);
      hostPeak = std::max(hostPeak, onHost);
    }
  }
  void touch(Entry *e) {
    if (!e->dev.p)
      return;
    lru.erase(e->use);
    e->use = ++clock;
    lru[e->use] = e;
  }

  void waitReady(Entry *e) {
    if (e->pending)
      check(cudaStreamWaitEvent(nullptr, e->ready, 0),
            "ordering the device tape");
    e->pending = false;
  }
  void markReady(Entry *e) {
    if (!e->ready)
      check(cudaEventCreateWithFlags(&e->ready, cudaEventDisableTiming),
            "creating an event");
    check(cudaEventRecord(e->ready, side), "ordering the device tape");
    e->pending = true;
  }
  /** The side stream waits for the default stream's work so far. */
  void sideAfterDefault() {
    static cudaEvent_t written = nullptr;
    if (!written)
      check(cudaEventCreateWithFlags(&written, cudaEventDisableTiming),
            "creating an event");
    check(cudaEventRecord(written, nullptr), "ordering the device tape");
    check(cudaStreamWaitEvent(side, written, 0), "ordering the device tape");
  }

  /** Drops e's device buffer: copied to pinned host memory first, on the
   *  side stream, unless a copy is there already (a fetched entry). */
  void evict(Entry *e) {
    Buf b = e->dev;
    if (!e->host.p) {
      sideAfterDefault();
      setHost(e, host.get(e->bytes, side));
      check(cudaMemcpyAsync(e->host.p, b.p, e->bytes, cudaMemcpyDeviceToHost,
                            side),
            "spilling the device tape");
      markReady(e);
      spilled += int64_t(e->bytes);
      setDev(e, Buf());
      dev.put(b, side); // free once the copy has read it
      return;
    }
    setDev(e, Buf());
    // A fetch may still be writing it: the side stream's order covers it.
    dev.put(b, e->pending ? side : nullptr);
  }

  /** Device memory for an entry of `bytes` on stream `s`: from the pool,
   *  else new within the budget; when `evictOthers`, after freeing pooled
   *  buffers of other sizes and evicting the least recently used entries
   *  (never `keep`) as far as needed. Null if that leaves no room. */
  Buf room(size_t bytes, cudaStream_t s, const Entry *keep, bool evictOthers) {
    const size_t limit = size_t(budget);
    for (;;) {
      Buf b = dev.get(bytes, s, limit);
      if (b.p || bytes > limit || !evictOthers)
        return b;
      if (dev.held > limit - bytes) {
        dev.trim(limit - bytes); // pooled buffers of other sizes
        b = dev.get(bytes, s, limit);
        if (b.p)
          return b;
      }
      auto it = lru.begin();
      if (it != lru.end() && it->second == keep)
        ++it;
      if (it == lru.end())
        return b;
      evict(it->second);
    }
  }

  /** Gives back e's buffers, each after its last use. */
  void drop(Entry *e) {
    if (e->dev.p) {
      Buf b = e->dev;
      setDev(e, Buf());
      dev.put(b, e->pending ? side : nullptr);
    }
    if (e->host.p) {
      Buf b = e->host;
      setHost(e, Buf());
      host.put(b, b.stream);
    }
    e->pending = false;
  }

  Entry *save(void *storage, int64_t storageBytes, Entry *e) {
    start();
    if (!e)
      e = new Entry();
    auto it = copies().find(storage);
    const bool fromDevice =
        it != copies().end() && it->second.dev && it->second.state != HostNewer;
    const size_t bytes = fromDevice
                             ? size_t(it->second.n) * size_t(it->second.dim) *
                                   size_t(it->second.bytes)
                             : size_t(storageBytes);
    // What the entry held is stale; a device buffer of the right size is
    // written again in place (after a fetch still writing it).
    if (e->bytes != bytes || !fromDevice || e->hostLayout)
      drop(e);
    if (e->host.p) {
      Buf b = e->host;
      setHost(e, Buf());
      host.put(b, b.stream);
    }
    waitReady(e);
    e->bytes = bytes;
    e->hostLayout = !fromDevice;
    if (!fromDevice) {
      // The host storage is current: kept as it is in pinned memory,
      // written by the host once the buffer's last copy is done.
      Buf b = host.get(bytes, nullptr);
      check(cudaStreamSynchronize(nullptr), "saving a dat");
      std::memcpy(b.p, storage, bytes);
      setHost(e, b);
      return e;
    }
    const Copy &c = it->second;
    e->layout = c;
    if (!e->dev.p)
      setDev(e, room(bytes, nullptr, e, true));
    if (e->dev.p) {
      check(cudaMemcpyAsync(e->dev.p, c.dev, bytes, cudaMemcpyDeviceToDevice,
                            nullptr),
            "saving a dat on the device");
      touch(e);
      return e;
    }
    // No room at all: the dat's values straight to pinned host memory on
    // the side stream, after the kernels that wrote them and before any
    // that overwrites them.
    sideAfterDefault();
    setHost(e, host.get(bytes, side));
    check(
        cudaMemcpyAsync(e->host.p, c.dev, bytes, cudaMemcpyDeviceToHost, side),
        "spilling a dat");
    markReady(e);
    waitReady(e);
    spilled += int64_t(bytes);
    return e;
  }

  void restore(opd_dat *d, Entry *e, bool last) {
    void *storage = opd_dat_data(d);
    if (e->hostLayout) {
      // Into host storage; the device copy, if any, is stale then.
      check(cudaStreamSynchronize(nullptr), "restoring a dat");
      std::memcpy(storage, e->host.p, e->bytes);
      host_changed(storage);
    } else {
      const Copy &l = e->layout;
      void *to = device(storage, l.n, l.dim, l.bytes, l.soa, true);
      waitReady(e); // a spill's or a fetch's copy
      if (e->dev.p && last) {
        // The entry's buffer becomes the dat's device copy; the dat's old
        // one goes to the pool once the default stream is past it.
        Copy &c = copies()[storage];
        Buf old;
        old.p = c.dev;
        old.bytes = e->bytes;
        c.dev = e->dev.p;
        if (e->dev.ev)
          cudaEventDestroy(e->dev.ev);
        setDev(e, Buf());
        dev.put(old, nullptr);
      } else if (e->dev.p) {
        check(cudaMemcpyAsync(to, e->dev.p, e->bytes, cudaMemcpyDeviceToDevice,
                              nullptr),
              "restoring a dat on the device");
        touch(e);
      } else {
        check(cudaMemcpyAsync(to, e->host.p, e->bytes, cudaMemcpyHostToDevice,
                              nullptr),
              "restoring a dat from host memory");
        e->host.stream = nullptr; // its last use, on the default stream
      }
    }
    if (last)
      destroy(e);
  }

  void destroy(Entry *e) {
    drop(e);
    if (e->ready)
      cudaEventDestroy(e->ready);
    delete e;
  }

  /** Brings a spilled entry back on the side stream when the budget has
   *  room for it without evicting anything. */
  void prefetch(Entry *e) {
    if (e->dev.p || e->hostLayout || !e->host.p)
      return;
    Buf b = room(e->bytes, side, e, false);
    if (!b.p)
      return;
    // After the default stream's work so far: a restore from the host
    // copy may still read it, and the buffer's last use may be there.
    sideAfterDefault();
    e->host.stream = side;
    check(
        cudaMemcpyAsync(b.p, e->host.p, e->bytes, cudaMemcpyHostToDevice, side),
        "bringing the device tape back");
    markReady(e);
    setDev(e, b);
    fetched += int64_t(e->bytes);
  }
};

inline Store &store() {
  static Store s;
  return s;
}

inline void *save_hook(opd_dat *, void *storage, int64_t bytes, void *e) {
  return store().save(storage, bytes, static_cast<Entry *>(e));
}
inline void restore_hook(opd_dat *d, void *e, int32_t last) {
  store().restore(d, static_cast<Entry *>(e), last != 0);
}
inline void release_hook(void *e) { store().destroy(static_cast<Entry *>(e)); }
inline void prefetch_hook(void *e) {
  store().prefetch(static_cast<Entry *>(e));
}
inline void usage_hook(int64_t *v, int32_t n) {
  const Store &s = store();
  const int64_t all[OPD_STORE_VALUES] = {s.devicePeak, s.hostPeak, s.budget,
                                         s.spilled, s.fetched};
  for (int32_t i = 0; i < n && i < OPD_STORE_VALUES; ++i)
    v[i] = all[i];
}

/** Registers the store with the runtime (opd::init). */
inline void register_store() {
  static const opd_adjoint_store hooks = {save_hook, restore_hook, release_hook,
                                          prefetch_hook, usage_hook};
  opd_rt_adjoint_store(&hooks);
}

} // namespace tape
} // namespace opd
#endif
