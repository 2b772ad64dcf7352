// The fixed-order cuBLASLt run and the agreement probe (gemm_agreement.h): y from both kernels on
// kAgreementProbeRows random rows, compared byte for byte on the host; one answer per shape class
// for the process.
#include "backend/cuda/gemm_agreement.h"

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "backend/cuda/add_bias.h"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/fill.h"
#include "backend/cuda/mma_gemm.h"
#include "backend/cuda/round_input.h"
#include "backend/device.h"

namespace cairn::cuda {
namespace {

// One product of the probe into a host vector.
std::vector<float> to_host(const Tensor& y) {
  std::vector<float> out(static_cast<size_t>(y.numel()));
  CAIRN_CUDA_CHECK(
      cudaMemcpyAsync(out.data(), y.raw(), y.nbytes(), cudaMemcpyDeviceToHost, stream()));
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  return out;
}

// Part `part` of s's k (gemm_order.h) as a shape of its own at s's pitch, without a bias.
GemmLtShape part_of(const GemmLtShape& s, int part) {
  GemmLtShape p = s;
  const int64_t h = gemm_cut(s.m, s.k);
  p.k = part == 0 ? h : s.k - h;
  p.pitch = s.k;
  p.bias = false;
  return p;
}

bool probe(GemmLtShape s, const Tensor& w, const float* bias) {
  const Device gpu{DeviceKind::kCuda, 0};
  s.n = kAgreementProbeRows;
  Tensor x = empty_on(gpu, {s.n, s.k}, DType::kF32);
  fill_uniform(x, 0x5eed, -2.0f, 2.0f);
  const void* xo = round_input(x, w.dtype());
  Tensor a = empty_on(gpu, {s.n, s.m}, DType::kF32), b = empty_on(gpu, {s.n, s.m}, DType::kF32);
  mma_gemm(xo, w, bias, a);
  if (!lt_fixed_order_run(s, w.raw(), xo, bias, b.data<float>())) return false;
  const std::vector<float> ha = to_host(a), hb = to_host(b);
  return std::memcmp(ha.data(), hb.data(), ha.size() * sizeof(float)) == 0;
}

}  // namespace

bool lt_fixed_order_run(const GemmLtShape& s, const void* w, const void* x, const float* bias,
                        float* y) {
  constexpr AlgoPolicy kFixed = AlgoPolicy::kFixedPerShapeClass;
  const int64_t cut = gemm_cut(s.m, s.k);
  if (cut >= s.k) {
    const GemmLtPlan* plan = gemm_lt_plan(s, kFixed);
    if (!plan) return false;
    gemm_lt_run(plan, w, x, s.bias ? bias : nullptr, y);
    if (bias && !s.bias) add_bias_rows(y, bias, s.n, s.m);
    return true;
  }
  const GemmLtPlan* first = gemm_lt_plan(part_of(s, 0), kFixed);
  const GemmLtPlan* second = gemm_lt_plan(part_of(s, 1), kFixed);
  if (!first || !second) return false;
  const auto skip = static_cast<int64_t>(dtype_bytes(s.dtype, 1)) * cut;
  gemm_lt_run(first, w, x, nullptr, y);
  gemm_lt_run(second, static_cast<const uint8_t*>(w) + skip, static_cast<const uint8_t*>(x) + skip,
              nullptr, y, /*accumulate=*/true);
  if (bias) add_bias_rows(y, bias, s.n, s.m);
  return true;
}

bool lt_agrees_with_mma(const GemmLtShape& cls, const Tensor& w, const float* bias) {
  if (stream_capturing()) return false;
  static std::mutex mutex;
  static std::map<std::pair<GemmLtClass, int64_t>, bool> answers;  // by class and cut
  const std::pair<GemmLtClass, int64_t> key{gemm_lt_class(cls), gemm_cut(cls.m, cls.k)};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = answers.find(key);
  if (it == answers.end()) it = answers.emplace(key, probe(cls, w, bias)).first;
  return it->second;
}

}  // namespace cairn::cuda
