// The tensor-core attention (bf16 and f16 K/V of head_dim 64, 128 and 256; docs/determinism.md):
// (a) a query row's bits do not depend on how the prompt was chunked (one prefill call, one
//     query per call as in decode, chunks of 7), across the split and fused kernels;
// (b) its error against the CPU op stays near f32 level (hi + lo splits of q and of the
//     softmax weights), on both kernels;
// (c) the CAIRN_ATTENTION_TENSOR_CORES switch changes bf16 and affine-quantized rows and
//     leaves f32 rows bit for bit as they were;
// (d) paged K/V on the fused kernel (pages of 16 and 48 tokens, released pages null) give
//     attention_seqs' bits over the same rows held contiguously.
// Outputs poisoned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attention_test_util.h"
#include "backend/cuda/attention.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

// Sets the tensor-core switch for a scope, then restores it.
class TensorCoreSwitch {
 public:
  explicit TensorCoreSwitch(bool on) : before_(cuda::attention_tensor_cores()) {
    cuda::set_attention_tensor_cores(on);
  }
  ~TensorCoreSwitch() { cuda::set_attention_tensor_cores(before_); }
  TensorCoreSwitch(const TensorCoreSwitch&) = delete;
  TensorCoreSwitch& operator=(const TensorCoreSwitch&) = delete;

 private:
  bool before_;
};

struct Config {
  DType dtype;
  int64_t head_dim;
  int32_t window;
  float softcap;
};

std::string describe(const Config& c) {
  return std::string(dtype_name(c.dtype)) + " head_dim " + std::to_string(c.head_dim) + " window " +
         std::to_string(c.window) + " softcap " + std::to_string(c.softcap);
}

std::vector<Config> configs() {
  std::vector<Config> out;
  for (DType dt : {DType::kBF16, DType::kF16})
    for (int64_t hd : {64, 128, 256})
      for (int32_t window : {0, 16})
        for (float cap : {0.0f, 30.0f}) out.push_back({dt, hd, window, cap});
  return out;
}

// (a) Queries 0..n-1 over keys 0..n-1 (32 heads over 8 KV heads): one call (the fused kernel),
// one query per call (the split kernel and its combine), chunks of 7 (the split kernel, or
// the fused one while the keys fit one split), each chunk over the keys up to its last query.
void expect_chunking_invariant(const Config& c) {
  const int64_t n = 1000, n_heads = 32, n_kv_heads = 8, hd = c.head_dim;
  std::mt19937 rng(static_cast<uint32_t>(hd * 7 + c.window + (c.dtype == DType::kF16)));
  const Tensor q = to_device(random_host({n, n_heads, hd}, DType::kF32, rng, 2.0f));
  const Tensor k = to_device(random_host({n, n_kv_heads, hd}, c.dtype, rng, 2.0f));
  const Tensor v = to_device(random_host({n, n_kv_heads, hd}, c.dtype, rng));
  const auto pos = iota(n, 0);
  const std::span<const int32_t> ps(pos);
  const ops::AttentionParams p{1.5f / std::sqrt(static_cast<float>(hd)), c.softcap, c.window};
  auto run = [&](int64_t chunk) { return attention_in_chunks(q, k, v, ps, p, chunk); };
  const Tensor all = run(n);
  const size_t row_bytes = static_cast<size_t>(n_heads * hd) * sizeof(float);
  for (int64_t chunk : {1, 7}) {
    const Tensor got = run(chunk);
    int64_t differing = 0, first = -1;
    for (int64_t t = 0; t < n; ++t)
      if (std::memcmp(got.data<float>() + t * n_heads * hd, all.data<float>() + t * n_heads * hd,
                      row_bytes) != 0) {
        if (first < 0) first = t;
        ++differing;
      }
    EXPECT_EQ(differing, 0) << "chunks of " << chunk << ": first differing query " << first << ", "
                            << describe(c);
  }
}

TEST(AttentionTensorCores, RowsIndependentOfChunking) {
  CAIRN_NEED_GPU();
  const TensorCoreSwitch on(true);
  for (const Config& c : configs()) expect_chunking_invariant(c);
}

// (b) n_q queries at the end of n_kv keys (key j at position j) against the CPU op. Bounds:
// q's hi + lo split keeps 16 (bf16) or 22 (f16) significant bits of each q element, the
// weights' split as many, and the products and sums are f32. An emulation of this arithmetic
// against a double reference on these distributions gave relative errors of 2.5e-6 to 4.8e-6
// (bf16) and 0.4e-6 to 1.6e-6 (f16, about the CPU's own f32 error), and at most 4.8e-6 and
// 2.0e-6 when every mma step truncates its terms at the largest one's f32 ulp (round toward
// zero); the CPU op adds up to 1.3e-6 of its own, so the bounds leave a factor of 2.
void expect_near_cpu(const Config& c, int64_t n_q, int64_t n_kv, int64_t n_heads,
                     int64_t n_kv_heads) {
  const int64_t hd = c.head_dim;
  std::mt19937 rng(static_cast<uint32_t>(n_q * 31 + n_kv + hd));
  const Tensor q = random_host({n_q, n_heads, hd}, DType::kF32, rng, 2.0f);
  const Tensor k = random_host({n_kv, n_kv_heads, hd}, c.dtype, rng, 2.0f);
  const Tensor v = random_host({n_kv, n_kv_heads, hd}, c.dtype, rng);
  const auto kp = iota(n_kv, 0);
  const auto qp = iota(n_q, static_cast<int32_t>(n_kv - n_q));
  const float scale = (c.softcap > 0.0f ? 4.0f : 1.0f) / std::sqrt(static_cast<float>(hd));
  const ops::AttentionParams p{scale, c.softcap, c.window};
  Tensor want = Tensor::empty(q.shape(), DType::kF32);
  ops::attention(q, k, v, qp, kp, p, want);
  Tensor out = poisoned_device(q.shape(), DType::kF32);
  ops::attention(to_device(q), to_device(k), to_device(v), qp, kp, p, out);
  const double bound = c.dtype == DType::kBF16 ? 1e-5 : 5e-6;
  EXPECT_LE(rel_error(to_host(out), want), bound)
      << "n_q " << n_q << " n_kv " << n_kv << ", " << describe(c);
}

TEST(AttentionTensorCores, NearTheCpuReference) {
  CAIRN_NEED_GPU();
  const TensorCoreSwitch on(true);
  for (const Config& c : configs()) {
    if ((c.window > 0) != (c.softcap > 0.0f)) continue;  // plain, and window with softcap
    expect_near_cpu(c, 1, 1000, 8, 2);                   // decode: split kernel, 8 splits combined
    expect_near_cpu(c, 7, 300, 8, 2);                    // a small chunk: split kernel
    expect_near_cpu(c, 100, 120, 8, 2);                  // one key split: fused kernel
    expect_near_cpu(c, 600, 600, 32, 8);                 // a prefill: fused kernel over 5 splits
  }
}

// One attention_seqs call (decode rows and a chunk) over K/V rows of `dtype` (kU8: 8-bit
// affine rows with groups of 64), head_dim 128, with the tensor-core switch as given.
Tensor seqs_output(DType dtype, bool tensor_cores) {
  const TensorCoreSwitch sw(tensor_cores);
  const int64_t hd = 128, n_heads = 8, n_kv_heads = 2;
  const ops::KvRowQuant quant = dtype == DType::kU8 ? ops::KvRowQuant{8, 64} : ops::KvRowQuant{};
  std::mt19937 rng(17);
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 300}, {64, 700}, {1, 45}};
  std::vector<Tensor> ks, vs;
  std::vector<ops::AttentionSeq> seqs;
  std::vector<int32_t> positions;
  int64_t row = 0;
  for (auto [n_q, n_kv] : shapes) {
    for (int which = 0; which < 2; ++which) {
      const Tensor f =
          random_host({n_kv, n_kv_heads, hd}, quant.enabled() ? DType::kF32 : dtype, rng, 2.0f);
      Tensor rows = f;
      if (quant.enabled()) {
        rows = Tensor::empty({n_kv, n_kv_heads, quant.row_bytes(hd)}, DType::kU8);
        const ops::RowCopy copy{&f, 0, &rows, 0, n_kv};
        ops::quantize_rows(std::span(&copy, 1), quant);
      }
      (which == 0 ? ks : vs).push_back(to_device(rows));
    }
    for (int64_t t = 0; t < n_q; ++t) positions.push_back(static_cast<int32_t>(n_kv - n_q + t));
    row += n_q;
  }
  row = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    seqs.push_back({&ks[i], &vs[i], row, shapes[i].first, shapes[i].second});
    row += shapes[i].first;
  }
  const Tensor q = to_device(random_host({row, n_heads, hd}, DType::kF32, rng, 2.0f));
  ops::AttentionParams p{1.0f / std::sqrt(static_cast<float>(hd)), 0.0f, 0};
  p.kv_quant = quant;
  Tensor out = poisoned_device(q.shape(), DType::kF32);
  ops::attention_seqs(q, seqs, positions, p, out);
  return to_host(out);
}

// (c) The switch is read by bf16/f16 and quantized rows (staged as f16 tiles), not by f32 rows.
// The bf16 and quantized cases show that it does switch (the two arithmetics differ in the last
// bits; quantized rows also by the f16 rounding of their decoded values), so the f32 equality is
// not vacuous.
TEST(AttentionTensorCores, SwitchMovesBf16AndQuantizedRowsAndLeavesF32) {
  CAIRN_NEED_GPU();
  const Tensor f_on = seqs_output(DType::kF32, true), f_off = seqs_output(DType::kF32, false);
  EXPECT_EQ(std::memcmp(f_on.raw(), f_off.raw(), f_on.nbytes()), 0);
  for (DType dt : {DType::kBF16, DType::kU8}) {
    const Tensor on = seqs_output(dt, true), off = seqs_output(dt, false);
    EXPECT_NE(std::memcmp(on.raw(), off.raw(), on.nbytes()), 0)
        << dtype_name(dt) << " rows should take the tensor-core arithmetic when the switch is on";
    EXPECT_LE(rel_error(on, off), dt == DType::kU8 ? 1e-3 : 1e-5)
        << dtype_name(dt) << ": the two arithmetics agree";
  }
}

// One sequence's K and V rows on the host.
struct HostSeq {
  int64_t n_q, n_kv;
  Tensor k, v;
};

// Device pages of page_tokens rows: [unused block][K block][V block] each (both offsets
// non-zero). Pages no query of their sequence sees (below its lowest query minus the window)
// are released: null in the table, never read.
struct Pages {
  std::vector<std::shared_ptr<Storage>> memory;
  std::vector<const void*> table;
  size_t block_bytes = 0;
};

Pages make_pages(std::vector<HostSeq>& seqs, int64_t page_tokens, int32_t window,
                 std::vector<ops::AttentionSeq>& out) {
  Pages ps;
  ps.block_bytes = seqs.front().k.nbytes() / static_cast<size_t>(seqs.front().n_kv) *
                   static_cast<size_t>(page_tokens);
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  for (HostSeq& s : seqs) {
    out.push_back({nullptr, nullptr, 0, s.n_q, s.n_kv, static_cast<int64_t>(ps.table.size())});
    for (int64_t j0 = 0; j0 < s.n_kv; j0 += page_tokens) {
      if (window > 0 && j0 + page_tokens <= s.n_kv - s.n_q - window) {
        ps.table.push_back(nullptr);
        continue;
      }
      auto page = dev.allocate(3 * ps.block_bytes);
      const int64_t n = std::min(page_tokens, s.n_kv - j0);
      for (int which = 0; which < 2; ++which) {
        const Tensor src = (which == 0 ? s.k : s.v).slice_rows(j0, j0 + n);
        Tensor dst = Tensor::view_of(page, (1 + which) * ps.block_bytes, src.shape(), src.dtype());
        dev.copy(src, dst);
      }
      ps.table.push_back(page->data());
      ps.memory.push_back(std::move(page));
    }
  }
  dev.synchronize();
  return ps;
}

// (d) A prefill-heavy batch (nine chunks of 256 queries: enough 64-row blocks for the fused
// kernel) over paged and over contiguous rows.
void expect_pages_equal_contiguous(DType dt, int64_t hd, int64_t page_tokens, int32_t window) {
  const int64_t n_heads = 8, n_kv_heads = 2;
  std::mt19937 rng(static_cast<uint32_t>(hd + page_tokens + window));
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {256, 256}, {256, 700}, {1, 300},   {256, 512}, {256, 1000}, {256, 400},
      {7, 90},    {256, 800}, {256, 600}, {256, 300}, {256, 999}};
  std::vector<HostSeq> seqs;
  std::vector<int32_t> positions;
  for (auto [n_q, n_kv] : shapes) {
    seqs.push_back({n_q, n_kv, random_host({n_kv, n_kv_heads, hd}, dt, rng, 2.0f),
                    random_host({n_kv, n_kv_heads, hd}, dt, rng)});
    for (int64_t t = 0; t < n_q; ++t) positions.push_back(static_cast<int32_t>(n_kv - n_q + t));
  }
  std::vector<ops::AttentionSeq> paged, contiguous;
  const Pages pages = make_pages(seqs, page_tokens, window, paged);
  std::vector<Tensor> kd, vd;
  kd.reserve(seqs.size()), vd.reserve(seqs.size());
  int64_t row = 0;
  for (size_t i = 0; i < seqs.size(); row += seqs[i].n_q, ++i) {
    paged[i].q_begin = row;
    kd.push_back(to_device(seqs[i].k)), vd.push_back(to_device(seqs[i].v));
    contiguous.push_back({&kd.back(), &vd.back(), row, seqs[i].n_q, seqs[i].n_kv});
  }
  const Tensor q = to_device(random_host({row, n_heads, hd}, DType::kF32, rng, 2.0f));
  const ops::AttentionParams p{1.0f / std::sqrt(static_cast<float>(hd)), 0.0f, window};
  const ops::KvPages kv{pages.table, pages.block_bytes, 2 * pages.block_bytes,
                        page_tokens, n_kv_heads,        dt};
  Tensor got = poisoned_device(q.shape(), DType::kF32),
         want = poisoned_device(q.shape(), DType::kF32);
  ops::attention_pages(q, kv, paged, positions, p, got);
  ops::attention_seqs(q, contiguous, positions, p, want);
  const Tensor g = to_host(got), w = to_host(want);
  EXPECT_EQ(std::memcmp(g.raw(), w.raw(), g.nbytes()), 0)
      << dtype_name(dt) << " head_dim " << hd << " page_tokens " << page_tokens << " window "
      << window;
}

TEST(AttentionTensorCores, PagesEqualContiguousOnTheFusedKernel) {
  CAIRN_NEED_GPU();
  const TensorCoreSwitch on(true);
  for (int64_t page_tokens : {16, 48})
    for (int32_t window : {0, 16}) {
      expect_pages_equal_contiguous(DType::kBF16, 128, page_tokens, window);
      expect_pages_equal_contiguous(DType::kF16, 64, page_tokens, window);
      expect_pages_equal_contiguous(DType::kBF16, 256, page_tokens, window);
    }
}

}  // namespace
}  // namespace cairn::gpu_test
