// The CPU's DeviceBackend: host memory, one in-order stream that runs work as it
// is issued, no graph capture.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "backend/cpu/local_group.h"
#include "backend/device.h"
#include "backend/op_profile.h"
#include "backend/ops.h"
#include "core/error.h"
#ifdef CAIRN_HAVE_CUDA
#include "backend/cuda/cuda_device.h"
#endif

namespace cairn {
namespace {

// Op-profile marks (op_profile.h): ops run as they are issued, so the host clock.
class CpuMarks final : public ops::OpMarks {
 public:
  void mark(size_t i) override {
    if (times_.size() <= i) times_.resize(i + 1);
    times_[i] = std::chrono::steady_clock::now();
  }
  double between_us(size_t a, size_t b) override {
    return std::chrono::duration<double, std::micro>(times_[b] - times_[a]).count();
  }
  void synchronize() override {}

 private:
  std::vector<std::chrono::steady_clock::time_point> times_;
};

class CpuDevice final : public DeviceBackend {
 public:
  Device device() const override { return Device::cpu(); }
  std::shared_ptr<Storage> allocate(size_t n_bytes) override { return allocate_host(n_bytes); }
  std::shared_ptr<Storage> allocate_pinned_host(size_t n_bytes) override {
    return allocate_host(n_bytes);
  }
  size_t free_bytes() const override { return pages(_SC_AVPHYS_PAGES); }
  size_t total_bytes() const override { return pages(_SC_PHYS_PAGES); }

  void copy(const Tensor& src, Tensor& dst, StreamId) override {
    if (!(src.shape() == dst.shape()) || src.dtype() != dst.dtype() || !src.is_contiguous() ||
        !dst.is_contiguous())
      fail(ErrorCode::kInvalidArgument, "copy from {} to {}: shapes, dtypes or layouts differ",
           src.describe(), dst.describe());
    std::memmove(dst.raw(), src.raw(), src.nbytes());
  }
  void synchronize(StreamId) override {}
  void copy_columns(const Tensor& src, int64_t src_col, Tensor& dst, int64_t dst_col,
                    int64_t n_cols, StreamId) override {
    const ColumnBlock b = column_block(src, src_col, dst, dst_col, n_cols);
    const auto* from = static_cast<const uint8_t*>(src.raw()) + b.src_offset;
    auto* to = static_cast<uint8_t*>(dst.raw()) + b.dst_offset;
    for (int64_t i = 0; i < b.rows; ++i)
      std::memmove(to + static_cast<size_t>(i) * b.dst_pitch,
                   from + static_cast<size_t>(i) * b.src_pitch, b.width);
  }
  void zero(Tensor& t, StreamId) override {
    if (!t.is_contiguous())
      fail(ErrorCode::kInvalidArgument, "zero: {} must be contiguous", t.describe());
    std::memset(t.raw(), 0, t.nbytes());
  }

  void fill_uniform(Tensor& t, uint64_t seed, float lo, float hi) override {
    if (!dtype_is_float(t.dtype()) || !t.is_contiguous())
      fail(ErrorCode::kInvalidArgument, "fill_uniform: {} must be a contiguous float tensor",
           t.describe());
    Tensor f = t.dtype() == DType::kF32 ? t : Tensor::empty(t.shape(), DType::kF32);
    float* p = f.data<float>();
    for (int64_t i = 0; i < f.numel(); ++i)
      p[i] = lo + (hi - lo) * uniform_at(seed, static_cast<uint64_t>(i));
    if (t.dtype() != DType::kF32) ops::convert(f, t);
  }

  void start_op_profile() override { ops::start_op_profile(DeviceKind::kCpu, marks_); }
  std::string stop_op_profile() override { return ops::stop_op_profile(DeviceKind::kCpu); }

  bool supports_graphs() const override { return false; }
  void begin_capture(StreamId) override { no_graphs(); }
  GraphId end_capture(StreamId) override { no_graphs(); }
  void replay(GraphId, StreamId) override { no_graphs(); }
  void release(GraphId) override { no_graphs(); }

  int device_count() const override { return 1; }
  void bind_thread(int index) override {
    if (index != 0) fail(ErrorCode::kInvalidArgument, "the CPU is device 0, not {}", index);
  }
  std::unique_ptr<RankGroup> make_rank_group(const std::vector<int>& devices) override {
    for (int d : devices) bind_thread(d);  // checks the index only
    return std::make_unique<LocalGroup>(static_cast<int>(devices.size()));
  }

 private:
  static size_t pages(int name) {
    long n = ::sysconf(name), size = ::sysconf(_SC_PAGESIZE);
    return n > 0 && size > 0 ? static_cast<size_t>(n) * static_cast<size_t>(size) : 0;
  }
  [[noreturn]] static void no_graphs() {
    fail(ErrorCode::kUnsupported, "the CPU backend runs eagerly and has no graph capture");
  }

  CpuMarks marks_;
};

}  // namespace

DeviceBackend& device_backend(DeviceKind kind) {
  static CpuDevice cpu;
  if (kind == DeviceKind::kCpu) return cpu;
#ifdef CAIRN_HAVE_CUDA
  return cuda::cuda_device();
#else
  fail(ErrorCode::kUnsupported,
       "this build of cairn has no CUDA backend (configure with -DCAIRN_CUDA=ON)");
#endif
}

ColumnBlock column_block(const Tensor& src, int64_t src_col, const Tensor& dst, int64_t dst_col,
                         int64_t n_cols) {
  const bool ok = src.ndim() == 2 && dst.ndim() == 2 && src.is_contiguous() &&
                  dst.is_contiguous() && src.dim(0) == dst.dim(0) && src.dtype() == dst.dtype() &&
                  n_cols >= 0 && src_col >= 0 && dst_col >= 0 && src_col + n_cols <= src.dim(1) &&
                  dst_col + n_cols <= dst.dim(1);
  if (!ok)
    fail(ErrorCode::kInvalidArgument, "copy_columns: columns [{}, +{}) of {} into [{}, +{}) of {}",
         src_col, n_cols, src.describe(), dst_col, n_cols, dst.describe());
  const size_t e = dtype_bytes(src.dtype(), 1);
  return {src.dim(0),
          static_cast<size_t>(src.dim(1)) * e,
          static_cast<size_t>(dst.dim(1)) * e,
          static_cast<size_t>(src_col) * e,
          static_cast<size_t>(dst_col) * e,
          static_cast<size_t>(n_cols) * e};
}

Tensor empty_on(Device device, const Shape& shape, DType dtype) {
  size_t n_bytes = dtype_bytes(dtype, static_cast<size_t>(shape.numel()));
  return Tensor::view_of(device_backend(device.kind).allocate(n_bytes), 0, shape, dtype);
}

}  // namespace cairn
