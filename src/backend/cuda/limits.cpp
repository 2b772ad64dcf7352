#include "backend/cuda/limits.h"

#include <cublas_v2.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/fill.h"
#include "backend/device.h"
#include "core/error.h"

namespace cairn::cuda {

double median_ms(int runs, const std::function<void()>& body) {
  cudaEvent_t a, b;
  CAIRN_CUDA_CHECK(cudaEventCreate(&a));
  CAIRN_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) body();
  std::vector<float> ms;
  for (int i = 0; i < runs; ++i) {
    CAIRN_CUDA_CHECK(cudaEventRecord(a, stream()));
    body();
    CAIRN_CUDA_CHECK(cudaEventRecord(b, stream()));
    CAIRN_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    CAIRN_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

namespace {

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(ErrorCode::kInternal, "cuBLAS: {} failed: {}", what, cublasGetStatusString(s));
}

}  // namespace

double measure_copy_bandwidth_gbs() {
  const int64_t n = int64_t{1} << 31;
  Tensor src = empty_on({DeviceKind::kCuda, 0}, {n}, DType::kU8);
  Tensor dst = empty_on({DeviceKind::kCuda, 0}, {n}, DType::kU8);
  CAIRN_CUDA_CHECK(cudaMemsetAsync(src.raw(), 0x5A, static_cast<size_t>(n), stream()));
  double ms = median_ms(20, [&] {
    CAIRN_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src.raw(), static_cast<size_t>(n),
                                     cudaMemcpyDeviceToDevice, stream()));
  });
  return 2.0 * static_cast<double>(n) / (ms * 1e-3) / 1e9;
}

double measure_bf16_gemm_gflops() {
  const int n = 8192;
  const Device gpu{DeviceKind::kCuda, 0};
  std::vector<Tensor> a, b;  // three input sets, rotated: not one pair hot in L2
  for (uint64_t i = 0; i < 3; ++i) {
    a.push_back(empty_on(gpu, {n, n}, DType::kBF16));
    b.push_back(empty_on(gpu, {n, n}, DType::kBF16));
    fill_uniform(a.back(), 100 + i, -1.0f, 1.0f);
    fill_uniform(b.back(), 200 + i, -1.0f, 1.0f);
  }
  Tensor c = empty_on(gpu, {n, n}, DType::kF32);
  cublasHandle_t h = nullptr;
  check_cublas(cublasCreate(&h), "cublasCreate");
  check_cublas(cublasSetStream(h, stream()), "cublasSetStream");
  const float one = 1.0f, zero = 0.0f;
  int k = 0;
  double ms = median_ms(20, [&] {
    int i = k++ % 3;
    check_cublas(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a[i].raw(), CUDA_R_16BF,
                              n, b[i].raw(), CUDA_R_16BF, n, &zero, c.raw(), CUDA_R_32F, n,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  });
  cublasDestroy(h);
  return 2.0 * n * double(n) * n / (ms * 1e-3) / 1e9;
}

}  // namespace cairn::cuda
