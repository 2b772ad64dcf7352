// Elementwise fast paths (add, scale, softcap, gated activation, convert,
// embedding): split into contiguous chunks across the pool. Each element is
// computed alone, so chunking never changes a result.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/fast/fast.h"
#include "core/thread_pool.h"

namespace cairn::ops::fast {
namespace {

constexpr int64_t kMinChunk = 1 << 14;

template <class F>
void chunks(int64_t n, F&& f) {
  ThreadPool::global().parallel_for(
      n, [&](int64_t b, int64_t e) { f(b, e); }, kMinChunk);
}

}  // namespace

const RowKernels& row_kernels() {
  switch (cpu::active_isa()) {
    case cpu::Isa::kAvx512:
      return row_kernels_avx512();
    case cpu::Isa::kAvx2:
      return row_kernels_avx2();
    case cpu::Isa::kScalar:
      break;
  }
  return row_kernels_scalar();
}

void add(const Tensor& a, const Tensor& b, Tensor& y) {
  const RowKernels& k = row_kernels();
  const float *ad = a.data<float>(), *bd = b.data<float>();
  float* yd = y.data<float>();
  chunks(a.numel(), [&](int64_t s, int64_t e) { k.add(ad + s, bd + s, yd + s, e - s); });
}

void scale(Tensor& x, float s) {
  const RowKernels& k = row_kernels();
  float* d = x.data<float>();
  chunks(x.numel(), [&](int64_t b, int64_t e) { k.scale(d + b, s, d + b, e - b); });
}

void softcap(Tensor& x, float cap) {
  const RowKernels& k = row_kernels();
  float* d = x.data<float>();
  chunks(x.numel(), [&](int64_t b, int64_t e) { k.softcap(d + b, cap, e - b); });
}

void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out) {
  const RowKernels& k = row_kernels();
  const float *g = gate.data<float>(), *u = up.data<float>();
  float* o = out.data<float>();
  chunks(gate.numel(), [&](int64_t b, int64_t e) { k.gated(g + b, u + b, act, o + b, e - b); });
}

void gated_activation_fused(const Tensor& gate_up, Activation act, Tensor& out) {
  const RowKernels& k = row_kernels();
  const int64_t f = out.dim(1);
  const float* gu = gate_up.data<float>();
  float* o = out.data<float>();
  ThreadPool::global().parallel_for(
      out.dim(0),
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          k.gated(gu + i * 2 * f, gu + i * 2 * f + f, act, o + i * f, f);
      },
      kMinChunk / (f > 0 ? f : 1) + 1);
}

void convert(const Tensor& src, Tensor& dst) {
  const RowKernels& k = row_kernels();
  const auto* s = static_cast<const uint8_t*>(src.raw());
  auto* d = static_cast<uint8_t*>(dst.raw());
  const size_t ss = dtype_bytes(src.dtype(), 1), ds = dtype_bytes(dst.dtype(), 1);
  chunks(src.numel(), [&](int64_t b, int64_t e) {
    k.convert(s + b * ss, src.dtype(), d + b * ds, dst.dtype(), e - b);
  });
}

void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y) {
  const RowKernels& k = row_kernels();
  const int64_t d = table.dim(1);
  const auto* t = static_cast<const uint8_t*>(table.raw());
  const size_t row_bytes = dtype_bytes(table.dtype(), static_cast<size_t>(d));
  float* yd = y.data<float>();
  ThreadPool::global().parallel_for(
      static_cast<int64_t>(ids.size()),
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          k.convert(t + static_cast<size_t>(ids[static_cast<size_t>(i)]) * row_bytes, table.dtype(),
                    yd + i * d, DType::kF32, d);
      },
      kMinChunk / (d > 0 ? d : 1) + 1);
}

}  // namespace cairn::ops::fast
