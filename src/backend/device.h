// What a backend offers beyond its ops, so that the layers above never name a
// device API: memory on its device, page-locked host memory for asynchronous
// transfers, in-order work queues (streams), copies between host and device,
// and capture of a step's launches for replay (CUDA graphs: a decode step
// captured once per batch-size bucket over arena memory whose addresses never
// move). The CPU backend implements each one trivially: its memory is host
// memory, its one stream runs work as it is issued, and it has no graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/communicator.h"
#include "core/tensor.h"

namespace cairn {

using StreamId = int32_t;  // 0 = the backend's default stream
// A second in-order queue, for copies issued on other threads than the one
// issuing the ops (a layer-wise restore's readers): ordered with nothing on
// stream 0, so its callers synchronize it before anything reads what it wrote.
constexpr StreamId kCopyStream = 1;
using GraphId = int32_t;  // a captured, replayable sequence of launches

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual Device device() const = 0;

  // Memory the device's kernels read and write. Error(kOutOfMemory) when it cannot.
  virtual std::shared_ptr<Storage> allocate(size_t n_bytes) = 0;
  // Host memory the device can copy to and from asynchronously (CPU: plain host memory).
  virtual std::shared_ptr<Storage> allocate_pinned_host(size_t n_bytes) = 0;
  // Bytes of device memory free now and in all (CPU: the machine's available and total RAM).
  virtual size_t free_bytes() const = 0;
  virtual size_t total_bytes() const = 0;

  // Copies src into dst (same shape and dtype, contiguous; either may be on the
  // host or this device), ordered after earlier work on `stream`. Returns at once
  // on a device with asynchronous streams; synchronize() waits for it.
  virtual void copy(const Tensor& src, Tensor& dst, StreamId stream = 0) = 0;
  virtual void synchronize(StreamId stream = 0) = 0;
  // Columns [src_col, src_col + n_cols) of every row of src [rows, *] into columns
  // [dst_col, dst_col + n_cols) of dst [rows, *] (2-D, contiguous, the same rows and dtype;
  // either on the host or this device), ordered like copy(): one copy, not one a row.
  virtual void copy_columns(const Tensor& src, int64_t src_col, Tensor& dst, int64_t dst_col,
                            int64_t n_cols, StreamId stream = 0) = 0;
  // Sets every byte of contiguous t (on this device) to 0, ordered like copy().
  virtual void zero(Tensor& t, StreamId stream = 0) = 0;

  // Fills t (contiguous f32/bf16/f16 on this device) with values uniform in
  // [lo, hi): element i gets uniform_at(seed, i) (below), rounded to t's dtype,
  // so every backend fills the same values. For random weights and test inputs.
  virtual void fill_uniform(Tensor& t, uint64_t seed, float lo, float hi) = 0;

  // The batch-invariant switch of this backend's matmul (docs/determinism.md),
  // process-wide, on by default: on, a row's bits never depend on how many rows
  // ran with it; off, faster kernels may change its last bits. Set it before a
  // run, not while work is in flight. The CPU kernels are invariant either way.
  virtual void set_batch_invariant(bool on) { (void)on; }
  virtual bool batch_invariant() const { return true; }
  // The attention's products on this backend's tensor cores, process-wide
  // (`--attention-precision`, docs/attention-precision.md): exact (the default; within 1e-5 of
  // the f32 CPU reference) or fast (q and p rounded once to the K/V dtype: bf16 precision, fewer
  // products). Either is deterministic; set it before a run. The CPU computes in f32 either way.
  virtual void set_fast_attention(bool on) { (void)on; }
  virtual bool fast_attention() const { return false; }
  // The name of the arithmetic this backend's ops run now ("cpu"; "cuda", "cuda+fast-attention",
  // ...): KV computed under one name holds other bits than under another, so the KV tiers keep
  // them apart (engine: the KV scheme's name).
  virtual std::string numerics() const { return "cpu"; }

  // Op profiling (cairn bench --profile-ops, backend/op_profile.h): between start and stop,
  // each op is timed on the host and on the device; stop returns the table.
  virtual void start_op_profile() = 0;
  virtual std::string stop_op_profile() = 0;

  // Graph capture: launches issued on `stream` between begin and end are recorded
  // instead of run; replay runs them again on the same memory. Host arguments an op
  // uploads during the capture (token ids, positions, rope frequencies) are read
  // again from the same host addresses at every replay: they must outlive the graph
  // and hold the replay's values then. Nothing may allocate host-visible memory,
  // synchronize, or free memory allocated before the capture while it is open.
  virtual bool supports_graphs() const = 0;
  // The fewest decode rows whose step a graph runs faster than the same launches issued as
  // the step goes (smaller steps run eagerly; 1: every size a graph covers).
  virtual int64_t min_graph_batch() const { return 1; }
  virtual void begin_capture(StreamId stream) = 0;
  virtual GraphId end_capture(StreamId stream) = 0;
  virtual void replay(GraphId graph, StreamId stream) = 0;
  // Before replaying `graphs` next, in that order, with nothing captured in between: reads
  // their host arguments now instead of at each replay, and queues their copies to the device
  // together (ahead of the first replay), so that no copy sits between two of them. A no-op
  // where replay has nothing to copy.
  virtual void prepare_replays(std::span<const GraphId> graphs, StreamId stream) {
    (void)graphs, (void)stream;
  }
  // Frees a graph once the launches already issued have run.
  virtual void release(GraphId graph) = 0;

  // Tensor-parallel ranks (docs/tensor-parallel.md), one thread each.
  // Devices of this kind present (CPU: 1).
  virtual int device_count() const = 0;
  // From now on the calling thread drives device `index` with streams and buffers of its own
  // (cuda/rank_context.h): a rank thread calls it once, before its first op. CPU: nothing to
  // do. Error(kInvalidArgument) for a device not present.
  virtual void bind_thread(int index) = 0;
  // The communicators of ranks on devices[r] (repeats allowed: ranks sharing a device), each
  // used by a thread bound to its device. CPU: the in-process group (cpu/local_group.h).
  virtual std::unique_ptr<RankGroup> make_rank_group(const std::vector<int>& devices) = 0;
  // Work on a tensor-parallel KV shard's pages from a thread that drives another device (the
  // engine's): until leave_device(token), the calling thread's ops run on device `index`, on
  // streams and buffers kept for such work there; nothing changes when the thread already
  // runs on `index` (then the token is null). leave_device waits for the work issued
  // meanwhile, so that it is done before any other stream reads what it wrote, and puts the
  // thread back. Use through OnDevice (backend/on_device.h). CPU: nothing to do.
  virtual void* enter_device(int index) {
    (void)index;
    return nullptr;
  }
  virtual void leave_device(void* token) noexcept { (void)token; }
};

// The value fill_uniform gives element i: a counter-based hash of (seed, i)
// (splitmix64) mapped to [0, 1) with 24 bits. Host and device compute it alike.
#if defined(__CUDACC__)
__host__ __device__
#endif
    inline float
    uniform_at(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

// copy_columns' block in bytes: its rows, each tensor's row pitch, where the block starts in
// each row and its width. Error(kInvalidArgument) for tensors that are not 2-D, contiguous,
// of the same rows and dtype, or columns out of range.
struct ColumnBlock {
  int64_t rows = 0;
  size_t src_pitch = 0, dst_pitch = 0, src_offset = 0, dst_offset = 0, width = 0;
};
ColumnBlock column_block(const Tensor& src, int64_t src_col, const Tensor& dst, int64_t dst_col,
                         int64_t n_cols);

// The backend of a device kind. Throws Error(kUnsupported) when cairn was built
// without it (CUDA without -DCAIRN_CUDA=ON).
DeviceBackend& device_backend(DeviceKind kind);

// A new contiguous tensor on `device`; contents uninitialized.
Tensor empty_on(Device device, const Shape& shape, DType dtype);

}  // namespace cairn
