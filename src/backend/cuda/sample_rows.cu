// ops::sample_rows on the GPU: every row's parameters and processor lists packed
// into one upload; one launch applies the processors in place (a block per row,
// one thread per listed id, each processor after the one before); one launch
// runs the sampling chain, a block of 512 threads per row (sample_chain.cuh);
// results for host outputs come back in one small copy per output. A block
// reads only its own row and parameters and its size is fixed, so a row's
// results never depend on the other rows or their number.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/op_errors.h"
#include "backend/cuda/rank_context.h"
#include "backend/cuda/sample_chain.cuh"
#include "backend/cuda/sample_rows.h"

namespace cairn::cuda {
namespace {

using sampling::RowArgs;

// The packed lists every row's ranges point into.
struct Lists {
  const ops::LogitBias* bias;  // each row's grouped by id, in its order within an id
  const int32_t* penalized;
  const ops::IdCount* counted;
  const int32_t* masked;
};

// Block i: row i's processors, in the CPU's order and arithmetic (one rounding
// per operation, no fused multiply-add). Ids within a list are distinct but for
// bias, whose entries for one id are one thread's, applied in order.
__global__ void processors_kernel(const RowArgs* rows, Lists lists, float* logits, int64_t vocab) {
  const RowArgs a = rows[blockIdx.x];
  float* row = logits + blockIdx.x * vocab;
  for (int32_t i = a.bias[0] + threadIdx.x; i < a.bias[1]; i += blockDim.x) {
    const int32_t id = lists.bias[i].id;
    if (i > a.bias[0] && lists.bias[i - 1].id == id) continue;
    float l = row[id];
    for (int32_t j = i; j < a.bias[1] && lists.bias[j].id == id; ++j)
      l = __fadd_rn(l, lists.bias[j].bias);
    row[id] = l;
  }
  __syncthreads();
  const float p = a.repetition_penalty;
  for (int32_t i = a.penalized[0] + threadIdx.x; i < a.penalized[1]; i += blockDim.x) {
    const float l = row[lists.penalized[i]];
    row[lists.penalized[i]] = l > 0.0f ? __fdiv_rn(l, p) : __fmul_rn(l, p);
  }
  __syncthreads();
  for (int32_t i = a.counted[0] + threadIdx.x; i < a.counted[1]; i += blockDim.x) {
    const ops::IdCount c = lists.counted[i];
    const float cut =
        __fadd_rn(__fmul_rn(a.frequency_penalty, static_cast<float>(c.count)), a.presence_penalty);
    row[c.id] = __fsub_rn(row[c.id], cut);
  }
  __syncthreads();
  for (int32_t i = a.masked[0] + threadIdx.x; i < a.masked[1]; i += blockDim.x)
    row[lists.masked[i]] = -INFINITY;
}

__global__ void __launch_bounds__(sampling::kThreads, 1)
    sample_kernel(const RowArgs* rows, const float* logits, int32_t vocab, bool vec,
                  sampling::Outputs out) {
  extern __shared__ uint4 smem4[];
  sampling::Shared& sh = *reinterpret_cast<sampling::Shared*>(smem4);
  const RowArgs a = rows[blockIdx.x];
  if (threadIdx.x == 0) sh.g.slice.count = 0;  // read after first_pass's barriers
  const sampling::RowView r = sampling::first_pass(
      sh, logits + static_cast<int64_t>(blockIdx.x) * vocab, vocab, vec, a.inv_t);
  if (a.greedy)
    sampling::greedy_row(sh, r, a, out);
  else
    sampling::sampled_row(sh, r, a, out);
}

// The call's rows and lists in one host buffer (RowArgs first, then each list).
struct Packed {
  std::vector<uint8_t> bytes;
  size_t bias_at = 0, penalized_at = 0, counted_at = 0, masked_at = 0;
  bool any_processor = false;
};

template <typename T>
size_t append(std::vector<uint8_t>& bytes, const std::vector<T>& v) {
  const size_t at = (bytes.size() + 7) / 8 * 8;
  bytes.resize(at + v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(bytes.data() + at, v.data(), v.size() * sizeof(T));
  return at;
}

// Row r's parameters; its lists appended to the call's, ranges into them.
RowArgs row_args(const ops::SampleRow& r, std::vector<ops::LogitBias>& bias,
                 std::vector<int32_t>& penalized, std::vector<ops::IdCount>& counted,
                 std::vector<int32_t>& masked) {
  RowArgs a;
  a.seed = r.seed, a.step = r.step, a.greedy = r.temperature == 0.0f;
  a.inv_t = a.greedy ? 1.0f : 1.0f / r.temperature;  // the CPU's f32 division
  a.top_k = r.top_k, a.top_p = r.top_p, a.min_p = r.min_p, a.n_top = r.n_top;
  a.repetition_penalty = r.repetition_penalty;
  a.presence_penalty = r.presence_penalty, a.frequency_penalty = r.frequency_penalty;
  auto range = [](int32_t(&ab)[2], size_t begin, size_t end) {
    ab[0] = static_cast<int32_t>(begin), ab[1] = static_cast<int32_t>(end);
  };
  const size_t b0 = bias.size();
  bias.insert(bias.end(), r.bias.begin(), r.bias.end());
  std::stable_sort(bias.begin() + static_cast<std::ptrdiff_t>(b0), bias.end(),
                   [](const ops::LogitBias& x, const ops::LogitBias& y) { return x.id < y.id; });
  range(a.bias, b0, bias.size());
  const size_t p0 = penalized.size();
  if (r.repetition_penalty != 1.0f)
    penalized.insert(penalized.end(), r.penalized.begin(), r.penalized.end());
  range(a.penalized, p0, penalized.size());
  const size_t c0 = counted.size();
  if (r.presence_penalty != 0.0f || r.frequency_penalty != 0.0f)
    counted.insert(counted.end(), r.counted.begin(), r.counted.end());
  range(a.counted, c0, counted.size());
  const size_t m0 = masked.size();
  masked.insert(masked.end(), r.masked.begin(), r.masked.end());
  range(a.masked, m0, masked.size());
  return a;
}

Packed pack(std::span<const ops::SampleRow> rows) {
  std::vector<RowArgs> args;
  std::vector<ops::LogitBias> bias;
  std::vector<int32_t> penalized, masked;
  std::vector<ops::IdCount> counted;
  args.reserve(rows.size());
  for (const ops::SampleRow& r : rows)
    args.push_back(row_args(r, bias, penalized, counted, masked));
  if (bias.size() + penalized.size() + counted.size() + masked.size() > 0x7fffffffu)
    invalid_argument("sample_rows", "more than 2^31 - 1 list entries");
  Packed p;
  append(p.bytes, args);
  p.bias_at = append(p.bytes, bias);
  p.penalized_at = append(p.bytes, penalized);
  p.counted_at = append(p.bytes, counted);
  p.masked_at = append(p.bytes, masked);
  p.any_processor = !bias.empty() || !penalized.empty() || !counted.empty() || !masked.empty();
  return p;
}

// Device memory for results headed to the host, one a context (rank_context.h), grown as
// needed; reused in stream order (each call waits for its copies before returning).
struct Staging {
  std::mutex mutex;
  void* buffer = nullptr;
  size_t capacity = 0;
};

void* staging(size_t bytes) {
  Staging& s = context_local<Staging>();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.capacity < bytes) {
    if (s.buffer) CAIRN_CUDA_CHECK(cudaFreeAsync(s.buffer, stream()));
    CAIRN_CUDA_CHECK(cudaMallocAsync(&s.buffer, bytes, stream()));
    s.capacity = bytes;
  }
  return s.buffer;
}

// The kernel's outputs: the tensors themselves on the device, else staging.
sampling::Outputs outputs_of(const ops::SampleOutputs& out, int64_t n, bool host) {
  const int32_t width = out.top_ids ? static_cast<int32_t>(out.top_ids->dim(1)) : 0;
  if (!host)
    return {out.ids->data<int32_t>(), out.logprobs->data<float>(),
            width ? out.top_ids->data<int32_t>() : nullptr,
            width ? out.top_logprobs->data<float>() : nullptr, width};
  const size_t top = static_cast<size_t>(n) * static_cast<size_t>(width);
  auto* base = static_cast<uint8_t*>(staging(static_cast<size_t>(n) * 8 + top * 8));
  return {reinterpret_cast<int32_t*>(base), reinterpret_cast<float*>(base + n * 4),
          width ? reinterpret_cast<int32_t*>(base + n * 8) : nullptr,
          width ? reinterpret_cast<float*>(base + n * 8 + top * 4) : nullptr, width};
}

void copy_to_host(const Tensor& dst, const void* src) {
  if (dst.nbytes() == 0) return;
  CAIRN_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src, dst.nbytes(), cudaMemcpyDeviceToHost, stream()));
}

void launch_sample(const RowArgs* rows, const Tensor& logits, const sampling::Outputs& o) {
  static std::once_flag once;
  std::call_once(once, [] { allow_smem(sample_kernel, sizeof(sampling::Shared)); });
  const auto vocab = static_cast<int32_t>(logits.dim(1));
  const bool vec = vocab % 4 == 0 && aligned16(logits.raw());
  sample_kernel<<<static_cast<unsigned>(logits.dim(0)), sampling::kThreads,
                  sizeof(sampling::Shared), stream()>>>(rows, logits.data<float>(), vocab, vec, o);
  check_launch("sample_kernel");
}

}  // namespace

void sample_rows(Tensor& logits, std::span<const ops::SampleRow> rows,
                 const ops::SampleOutputs& out) {
  const auto n = static_cast<int64_t>(rows.size());
  if (n > 0x7fffffff) invalid_argument("sample_rows", "more than 2^31 - 1 rows");
  const Packed p = pack(rows);
  const uint8_t* d = static_cast<const uint8_t*>(upload(p.bytes.data(), p.bytes.size()));
  const auto* args = reinterpret_cast<const RowArgs*>(d);
  if (p.any_processor) {
    const Lists lists{reinterpret_cast<const ops::LogitBias*>(d + p.bias_at),
                      reinterpret_cast<const int32_t*>(d + p.penalized_at),
                      reinterpret_cast<const ops::IdCount*>(d + p.counted_at),
                      reinterpret_cast<const int32_t*>(d + p.masked_at)};
    processors_kernel<<<static_cast<unsigned>(n), kBlock, 0, stream()>>>(
        args, lists, logits.data<float>(), logits.dim(1));
    check_launch("processors_kernel");
  }
  const bool host = out.ids->device().kind == DeviceKind::kCpu;
  const sampling::Outputs o = outputs_of(out, n, host);
  launch_sample(args, logits, o);
  if (!host) return;
  copy_to_host(*out.ids, o.ids);
  copy_to_host(*out.logprobs, o.logprobs);
  if (o.width > 0)
    copy_to_host(*out.top_ids, o.top_ids), copy_to_host(*out.top_logprobs, o.top_logprobs);
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

}  // namespace cairn::cuda
