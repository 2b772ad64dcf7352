#include "backend/cuda/cuda_device.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/cuda/attention.h"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/fill.h"
#include "backend/cuda/graph_store.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/peer_group.h"
#include "backend/cuda/rank_context.h"
#include "backend/op_profile.h"
#include "core/error.h"
#ifdef CAIRN_HAVE_NCCL
#include "backend/cuda/nccl/nccl_group.h"
#endif

namespace cairn::cuda {
namespace {

// Decode rows up to which a step runs eagerly when launches overlap outside graphs.
constexpr int64_t kEagerRows = 16;

// Memory of the allocating thread's context (rank_context.h), freed on its ops' stream.
class DeviceStorage final : public Storage {
 public:
  DeviceStorage(void* p, size_t n, bool pinned)
      : Storage(p, n, pinned ? Device::cpu() : Device{DeviceKind::kCuda, context_device()}),
        pinned_(pinned),
        stream_(stream()) {}
  ~DeviceStorage() override {
    // Frees are ordered after the work already issued that may read this memory.
    if (pinned_) {
      cudaStreamSynchronize(stream_);
      cudaFreeHost(data());
    } else {
      cudaFreeAsync(data(), stream_);
    }
  }

 private:
  bool pinned_;
  cudaStream_t stream_;
};

// Op-profile marks (op_profile.h): events on the ops' stream, created as needed and
// reused by later windows.
class CudaMarks final : public ops::OpMarks {
 public:
  void mark(size_t i) override {
    while (events_.size() <= i) {
      cudaEvent_t e = nullptr;
      CAIRN_CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
    CAIRN_CUDA_CHECK(cudaEventRecord(events_[i], stream()));
  }
  double between_us(size_t a, size_t b) override {
    float ms = 0;
    CAIRN_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[a], events_[b]));
    return 1e3 * ms;
  }
  void synchronize() override { CAIRN_CUDA_CHECK(cudaStreamSynchronize(stream())); }

 private:
  std::vector<cudaEvent_t> events_;
};

class CudaDevice final : public DeviceBackend {
 public:
  CudaDevice() { keep_freed_blocks(0); }
  Device device() const override { return {DeviceKind::kCuda, 0}; }

  std::shared_ptr<Storage> allocate(size_t n_bytes) override {
    void* p = nullptr;
    // Stream-ordered: a buffer freed by an earlier step is reused without a sync.
    CAIRN_CUDA_CHECK(cudaMallocAsync(&p, n_bytes == 0 ? 1 : n_bytes, stream()));
    return std::make_shared<DeviceStorage>(p, n_bytes, false);
  }
  std::shared_ptr<Storage> allocate_pinned_host(size_t n_bytes) override {
    void* p = nullptr;
    CAIRN_CUDA_CHECK(cudaHostAlloc(&p, n_bytes == 0 ? 1 : n_bytes, cudaHostAllocPortable));
    return std::make_shared<DeviceStorage>(p, n_bytes, true);
  }
  size_t free_bytes() const override { return mem_info().first; }
  size_t total_bytes() const override { return mem_info().second; }

  void copy(const Tensor& src, Tensor& dst, StreamId s) override {
    if (!(src.shape() == dst.shape()) || src.dtype() != dst.dtype() || !src.is_contiguous() ||
        !dst.is_contiguous())
      fail(ErrorCode::kInvalidArgument, "copy from {} to {}: shapes, dtypes or layouts differ",
           src.describe(), dst.describe());
    CAIRN_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src.raw(), src.nbytes(), cudaMemcpyDefault, of(s)));
  }
  void synchronize(StreamId s) override { CAIRN_CUDA_CHECK(cudaStreamSynchronize(of(s))); }
  void copy_columns(const Tensor& src, int64_t src_col, Tensor& dst, int64_t dst_col,
                    int64_t n_cols, StreamId s) override {
    const ColumnBlock b = column_block(src, src_col, dst, dst_col, n_cols);
    if (b.rows == 0 || b.width == 0) return;
    CAIRN_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<uint8_t*>(dst.raw()) + b.dst_offset, b.dst_pitch,
                                       static_cast<const uint8_t*>(src.raw()) + b.src_offset,
                                       b.src_pitch, b.width, static_cast<size_t>(b.rows),
                                       cudaMemcpyDefault, of(s)));
  }
  void zero(Tensor& t, StreamId s) override {
    if (!t.is_contiguous())
      fail(ErrorCode::kInvalidArgument, "zero: {} must be contiguous", t.describe());
    CAIRN_CUDA_CHECK(cudaMemsetAsync(t.raw(), 0, t.nbytes(), of(s)));
  }

  void fill_uniform(Tensor& t, uint64_t seed, float lo, float hi) override {
    cuda::fill_uniform(t, seed, lo, hi);
  }

  void set_batch_invariant(bool on) override { cuda::set_batch_invariant(on); }
  void set_fast_attention(bool on) override { cuda::set_attention_fast_products(on); }
  bool fast_attention() const override { return cuda::attention_fast_products(); }
  std::string numerics() const override {
    std::string name = "cuda";
    if (!cuda::attention_tensor_cores()) name += "+cuda-core-attention";
    if (cuda::attention_fast_products()) name += "+fast-attention";
    if (!cuda::batch_invariant()) name += "+variant";
    return name;
  }

  void start_op_profile() override { ops::start_op_profile(DeviceKind::kCuda, marks_); }
  std::string stop_op_profile() override { return ops::stop_op_profile(DeviceKind::kCuda); }

  bool supports_graphs() const override { return true; }
  // With overlapped launches outside graphs only (launch.h, the default), a step of up to 16
  // rows runs faster issued as it goes: on an H200, 8B decode at batch 1 195 against 183 tok/s
  // from the graphs, at 16 2,761 against 2,631; the graph segments end the overlap at every
  // layer's attention (docs/cuda.md).
  int64_t min_graph_batch() const override {
    return programmatic_launch() == Programmatic::kEager ? kEagerRows + 1 : 1;
  }
  void begin_capture(StreamId s) override {
    ops_stream(s);
    begin_graph_capture();
  }
  GraphId end_capture(StreamId s) override {
    ops_stream(s);
    return end_graph_capture();
  }
  void replay(GraphId g, StreamId s) override {
    ops_stream(s);
    replay_graph(g);
  }
  void prepare_replays(std::span<const GraphId> graphs, StreamId s) override {
    ops_stream(s);
    prepare_graph_replays(graphs);
  }
  void release(GraphId g) override { release_graph(g); }
  bool batch_invariant() const override { return cuda::batch_invariant(); }

  int device_count() const override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) cudaGetLastError(), n = 0;
    return n;
  }
  void bind_thread(int index) override {
    bind_thread_device(index);
    keep_freed_blocks(index);
  }
  std::unique_ptr<RankGroup> make_rank_group(const std::vector<int>& devices) override;
  void* enter_device(int index) override { return enter_device_context(index); }
  void leave_device(void* token) noexcept override { leave_device_context(token); }

 private:
  // Keeps freed blocks in `device`'s pool: a step's activations are freed and taken again.
  static void keep_freed_blocks(int device) {
    cudaMemPool_t pool = nullptr;
    CAIRN_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t keep = UINT64_MAX;
    CAIRN_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  // Stream 0 is the ops' stream; kCopyStream takes other threads' copies.
  static cudaStream_t of(StreamId s) {
    if (s == kCopyStream) return copy_stream();
    if (s != 0) fail(ErrorCode::kInvalidArgument, "CUDA backend: no stream {}", s);
    return stream();
  }
  // Graphs are captured and replayed on the ops' stream only.
  static void ops_stream(StreamId s) {
    if (s != 0)
      fail(ErrorCode::kInvalidArgument, "CUDA backend: graphs run on stream 0, not {}", s);
  }
  static std::pair<size_t, size_t> mem_info() {
    size_t free = 0, total = 0;
    CAIRN_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return {free, total};
  }

  CudaMarks marks_;
};

// Ranks on distinct GPUs meet through NCCL where it was built (CAIRN_TP_GROUP=peer: through
// peer memory instead); ranks sharing a GPU, or GPUs without NCCL, through the peer group.
std::unique_ptr<RankGroup> CudaDevice::make_rank_group(const std::vector<int>& devices) {
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  const bool distinct = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  const char* choice = std::getenv("CAIRN_TP_GROUP");
  const bool peer = choice != nullptr && std::string(choice) == "peer";
#ifdef CAIRN_HAVE_NCCL
  if (devices.size() > 1 && distinct && !peer) return std::make_unique<NcclGroup>(devices);
#else
  (void)distinct, (void)peer;
#endif
  return std::make_unique<PeerGroup>(devices);
}

}  // namespace

DeviceBackend& cuda_device() {
  if (!device_present())
    fail(ErrorCode::kUnsupported, "no CUDA device is present (cairn was built with CUDA)");
  static CudaDevice device;
  return device;
}

}  // namespace cairn::cuda
