// The agreement probe (gemm_agreement.h): y from both kernels on kAgreementProbeRows random
// rows, compared byte for byte on the host; one answer per shape class for the process.
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

bool probe(GemmLtShape s, const Tensor& w, const float* bias) {
  const Device gpu{DeviceKind::kCuda, 0};
  s.n = kAgreementProbeRows;
  const GemmLtPlan* plan = gemm_lt_plan(s, AlgoPolicy::kFixedPerShapeClass);
  if (!plan) return false;
  Tensor x = empty_on(gpu, {s.n, s.k}, DType::kF32);
  fill_uniform(x, 0x5eed, -2.0f, 2.0f);
  const void* xo = round_input(x, w.dtype());
  Tensor a = empty_on(gpu, {s.n, s.m}, DType::kF32), b = empty_on(gpu, {s.n, s.m}, DType::kF32);
  mma_gemm(xo, w, bias, a);
  // As matmul runs the plan: the bias in the epilogue when planned so, else added after.
  gemm_lt_run(plan, w.raw(), xo, s.bias ? bias : nullptr, b.data<float>());
  if (bias && !s.bias) add_bias_rows(b.data<float>(), bias, s.n, s.m);
  const std::vector<float> ha = to_host(a), hb = to_host(b);
  return std::memcmp(ha.data(), hb.data(), ha.size() * sizeof(float)) == 0;
}

}  // namespace

bool lt_agrees_with_mma(const GemmLtShape& cls, const Tensor& w, const float* bias) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  CAIRN_CUDA_CHECK(cudaStreamIsCapturing(stream(), &capturing));
  if (capturing != cudaStreamCaptureStatusNone) return false;
  static std::mutex mutex;
  static std::map<GemmLtClass, bool> answers;
  const GemmLtClass key = gemm_lt_class(cls);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = answers.find(key);
  if (it == answers.end()) it = answers.emplace(key, probe(cls, w, bias)).first;
  return it->second;
}

}  // namespace cairn::cuda
