#include "gpu_test_util.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cuda/cuda_ops.h"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/mma_gemm.h"
#include "backend/cuda/wgmma_stream.h"
#include "backend/device.h"
#include "backend/ops.h"

namespace cairn::gpu_test {

bool gpu_present() {
  return cuda::device_present();
}

Tensor random_host(const Shape& shape, DType dtype, std::mt19937& rng, float scale) {
  Tensor f = Tensor::empty(shape, DType::kF32);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < f.numel(); ++i) f.data<float>()[i] = u(rng);
  if (dtype == DType::kF32) return f;
  Tensor t = Tensor::empty(shape, dtype);
  ops::convert(f, t);
  return t;
}

Tensor to_device(const Tensor& t) {
  Tensor d = empty_on({DeviceKind::kCuda, 0}, t.shape(), t.dtype());
  DeviceBackend& b = device_backend(DeviceKind::kCuda);
  b.copy(t, d);
  b.synchronize();
  return d;
}

Tensor to_host(const Tensor& t) {
  DeviceBackend& b = device_backend(DeviceKind::kCuda);
  b.synchronize();
  Tensor h = Tensor::empty(t.shape(), t.dtype());
  b.copy(t, h);
  b.synchronize();
  return h;
}

Tensor poisoned_device(const Shape& shape, DType dtype) {
  Tensor h = Tensor::empty(shape, dtype);
  std::memset(h.raw(), 0xFF, h.nbytes());
  return to_device(h);
}

double rel_error(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.numel(), b.numel());
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.data<float>()[i], y = b.data<float>()[i];
    if (!std::isfinite(x)) return std::numeric_limits<double>::infinity();
    num += (x - y) * (x - y);
    den += y * y;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

InvariantScope::InvariantScope(bool on)
    : SwitchScope(&cuda::batch_invariant, &cuda::set_batch_invariant, on) {}

FusedInputsScope::FusedInputsScope(bool on)
    : SwitchScope(&cuda::fused_inputs, &cuda::set_fused_inputs, on) {}

JoinScope::JoinScope(bool on) : SwitchScope(&cuda::gemm_join, &cuda::set_gemm_join, on) {}

SplitScope::SplitScope(int64_t from) : saved_(cuda::gemm_split_from()) {
  cuda::set_gemm_split_from(from);
}
SplitScope::~SplitScope() {
  cuda::set_gemm_split_from(saved_);
}

std::vector<std::pair<int64_t, int64_t>> sizes_from_env(
    const char* name, std::vector<std::pair<int64_t, int64_t>> fallback) {
  const char* env = std::getenv(name);
  if (env == nullptr) return fallback;
  std::vector<std::pair<int64_t, int64_t>> sizes;
  long long a = 0, b = 0;
  for (const char* c = env; c != nullptr && std::sscanf(c, "%lldx%lld", &a, &b) == 2;) {
    sizes.emplace_back(a, b);
    c = std::strchr(c, ',');
    if (c != nullptr) ++c;
  }
  return sizes;
}

}  // namespace cairn::gpu_test
