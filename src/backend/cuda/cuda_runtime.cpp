#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/graph_store.h"
#include "backend/cuda/rank_context.h"

#include <array>
#include <cstring>
#include <mutex>
#include <utility>

#include "core/error.h"

namespace cairn::cuda {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  // A failed allocation is not sticky but stays as the thread's last error, which the
  // next check_launch would report as its own: clear it.
  if (e == cudaErrorMemoryAllocation) cudaGetLastError();
  ErrorCode code = e == cudaErrorMemoryAllocation ? ErrorCode::kOutOfMemory : ErrorCode::kInternal;
  fail(code, "CUDA: {} failed: {} ({})", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

void check_launch(const char* kernel) {
  check(cudaGetLastError(), kernel);
}

bool device_present() {
  static const bool present = [] {
    int n = 0;
    bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    cudaGetLastError();  // clear the sticky "no device" error
    return ok;
  }();
  return present;
}

int sm_count() {
  static const int n = [] {
    int dev = 0, count = 0;
    CAIRN_CUDA_CHECK(cudaGetDevice(&dev));
    CAIRN_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev));
    return count;
  }();
  return n;
}

namespace {

// Upload slots: pinned staging plus device memory. A slot's pinned half is
// reused once the event after its last copy has fired; its device half is
// reused by a copy on the same in-order stream, hence after every earlier
// kernel that read it.
constexpr size_t kSlots = 16;
constexpr size_t kSlotBytes = 256 << 10;
// Uploads up to this size (any that fits a slot) are first looked for among the slots: the same
// bytes still in a slot (a step's positions, read by every layer's rope and attention; a rope
// table; a decode step's page table, the same for every layer of a group) serve again without a
// copy. A copy a layer of a batch's page table (8 KiB at 64 sequences of 512 keys) cost paged
// decode 0.4 ms a step of the 8B shape, ~4%, when only uploads of ≤ 4 KiB were looked for.
// A slot is overwritten only by a later copy on the same in-order stream, so every kernel
// enqueued before then reads the old bytes.
// Only slots at least kGuard writes away from being overwritten are reused, so a returned
// pointer outlives the next kGuard uploads (~1 MiB) as every upload's does.
constexpr size_t kReuseBytes = kSlotBytes;
constexpr size_t kGuard = 4;

struct UploadRing {
  std::mutex mutex;
  uint8_t* pinned = nullptr;
  uint8_t* device = nullptr;
  std::array<cudaEvent_t, kSlots> done{};
  std::array<size_t, kSlots> sizes{};  // bytes the slot holds (0: none)
  size_t next = 0;

  // A slot holding exactly these bytes, or kSlots.
  size_t holding(const void* host, size_t bytes) const {
    if (bytes > kReuseBytes) return kSlots;
    for (size_t d = kGuard; d < kSlots; ++d) {  // d: writes until slot s is overwritten
      const size_t s = (next + d) % kSlots;
      if (sizes[s] == bytes && std::memcmp(pinned + s * kSlotBytes, host, bytes) == 0) return s;
    }
    return kSlots;
  }

  UploadRing() {
    CAIRN_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&pinned), kSlots * kSlotBytes,
                                   cudaHostAllocDefault));
    CAIRN_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&device), kSlots * kSlotBytes));
    for (cudaEvent_t& e : done)
      CAIRN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
};

// The context's ring (rank_context.h: lives until exit, kernels may still read it).
UploadRing& ring() {
  return context_local<UploadRing>();
}

// upload_large's buffers, one set a context.
struct LargeUploads {
  std::mutex mutex;
  std::array<std::pair<void*, size_t>, 4> buffers{};
  size_t next = 0;
};

// Larger than a slot: one of four growable device buffers, used in turn. Reuse
// and growth are ordered on the stream after the kernels that read the old
// contents; a copy from pageable memory returns once the source is staged.
const void* upload_large(const void* host, size_t bytes) {
  LargeUploads& l = context_local<LargeUploads>();
  std::lock_guard<std::mutex> lock(l.mutex);
  auto& [d, capacity] = l.buffers[l.next];
  l.next = (l.next + 1) % l.buffers.size();
  if (capacity < bytes) {
    if (d) CAIRN_CUDA_CHECK(cudaFreeAsync(d, stream()));
    CAIRN_CUDA_CHECK(cudaMallocAsync(&d, bytes, stream()));
    capacity = bytes;
  }
  CAIRN_CUDA_CHECK(cudaMemcpyAsync(d, host, bytes, cudaMemcpyHostToDevice, stream()));
  return d;
}

}  // namespace

const void* upload(const void* host, size_t bytes) {
  if (bytes == 0) return nullptr;
  if (capturing_uploads()) return capture_upload(host, bytes);
  if (bytes > kSlotBytes) return upload_large(host, bytes);
  UploadRing& r = ring();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (size_t held = r.holding(host, bytes); held < kSlots) return r.device + held * kSlotBytes;
  size_t slot = r.next;
  r.next = (r.next + 1) % kSlots;
  CAIRN_CUDA_CHECK(cudaEventSynchronize(r.done[slot]));
  std::memcpy(r.pinned + slot * kSlotBytes, host, bytes);
  r.sizes[slot] = bytes;
  void* d = r.device + slot * kSlotBytes;
  CAIRN_CUDA_CHECK(
      cudaMemcpyAsync(d, r.pinned + slot * kSlotBytes, bytes, cudaMemcpyHostToDevice, stream()));
  CAIRN_CUDA_CHECK(cudaEventRecord(r.done[slot], stream()));
  return d;
}

}  // namespace cairn::cuda
