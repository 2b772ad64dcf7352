// CUDA attention_pages against CUDA attention_seqs over the same rows held
// contiguously, bit for bit: pages of 16, 32 and 48 tokens (a key block of 32
// inside one page, across two, across a page edge; bf16 also 1, 7 and 100), pages laid out as the
// paged KV state lays them (two layers, K then V each; the second layer read,
// so both offsets are non-zero), K/V f32, bf16, f16 and affine 8/4-bit,
// decode rows beside prefill chunks, windows 0 and 16 (with the leading pages a
// window released set to null: never read), and the CPU entry on the same
// pages within f32 error. Outputs poisoned.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

constexpr int64_t kHeads = 8, kKvHeads = 2, kHeadDim = 128;

struct Case {
  DType dtype;  // of the rows; kU8 with quant
  ops::KvRowQuant quant;
  int64_t page_tokens;
  int32_t window;
};

std::string describe(const Case& c) {
  return std::string(dtype_name(c.dtype)) + " bits " + std::to_string(c.quant.bits) +
         " page_tokens " + std::to_string(c.page_tokens) + " window " + std::to_string(c.window);
}

// One sequence's rows [n_kv, kKvHeads, row_elems] of K and V on the host.
struct HostSeq {
  int64_t n_q, n_kv;
  Tensor k, v;
};

Tensor host_rows(const Case& c, int64_t n, std::mt19937& rng) {
  if (!c.quant.enabled()) return random_host({n, kKvHeads, kHeadDim}, c.dtype, rng, 2.0f);
  const Tensor f = random_host({n, kKvHeads, kHeadDim}, DType::kF32, rng, 2.0f);
  Tensor rows = Tensor::empty({n, kKvHeads, c.quant.row_bytes(kHeadDim)}, DType::kU8);
  const ops::RowCopy copy{&f, 0, &rows, 0, n};
  ops::quantize_rows(std::span(&copy, 1), c.quant);
  return rows;
}

// Pages of every sequence in the state's layout: [layer 0 K, layer 0 V, layer 1 K,
// layer 1 V] blocks of page_tokens rows; only layer 1 holds the rows. Pages wholly
// below `released_below` keys of a sequence are left out (null).
struct PageSet {
  std::vector<std::shared_ptr<Storage>> memory;
  std::vector<const void*> table;
  size_t block_bytes = 0;
};

PageSet make_pages(const Case& c, std::vector<HostSeq>& seqs, std::vector<ops::AttentionSeq>& out,
                   bool on_gpu) {
  PageSet ps;
  const size_t token_bytes = seqs.front().k.nbytes() / static_cast<size_t>(seqs.front().n_kv);
  ps.block_bytes = token_bytes * static_cast<size_t>(c.page_tokens);
  DeviceBackend& dev = device_backend(on_gpu ? DeviceKind::kCuda : DeviceKind::kCpu);
  for (HostSeq& s : seqs) {
    out.push_back({nullptr, nullptr, 0, s.n_q, s.n_kv, static_cast<int64_t>(ps.table.size())});
    const int64_t lowest_query = s.n_kv - s.n_q;
    for (int64_t j0 = 0; j0 < s.n_kv; j0 += c.page_tokens) {
      if (c.window > 0 && j0 + c.page_tokens <= lowest_query - c.window) {
        ps.table.push_back(nullptr);  // released: no query of this sequence sees it
        continue;
      }
      auto page = dev.allocate(4 * ps.block_bytes);
      const int64_t n = std::min(c.page_tokens, s.n_kv - j0);
      for (int which = 0; which < 2; ++which) {
        const Tensor& rows = which == 0 ? s.k : s.v;
        const Tensor src = rows.slice_rows(j0, j0 + n);
        Tensor dst = Tensor::view_of(page, (2 + which) * ps.block_bytes, src.shape(), src.dtype());
        dev.copy(src, dst);
      }
      ps.table.push_back(page->data());
      ps.memory.push_back(std::move(page));
    }
  }
  dev.synchronize();
  return ps;
}

// The CPU entry over host pages of the same bytes as `got` (the GPU's rows), within f32 error.
void expect_cpu_close(const Case& c, std::vector<HostSeq>& seqs,
                      const std::vector<ops::AttentionSeq>& paged, const Tensor& qh,
                      const std::vector<int32_t>& positions, const ops::AttentionParams& p,
                      const Tensor& got) {
  std::vector<ops::AttentionSeq> host_paged;
  const PageSet host_pages = make_pages(c, seqs, host_paged, false);
  for (size_t i = 0; i < host_paged.size(); ++i) host_paged[i].q_begin = paged[i].q_begin;
  Tensor cpu_out = Tensor::zeros(qh.shape(), DType::kF32);
  const size_t block = host_pages.block_bytes;
  ops::attention_pages(qh,
                       {host_pages.table, 2 * block, 3 * block, c.page_tokens, kKvHeads, c.dtype},
                       host_paged, positions, p, cpu_out);
  const int64_t skip = kHeads * kHeadDim;
  const Tensor a = got.reshape({got.numel()}).slice_rows(skip, got.numel());
  const Tensor b = cpu_out.reshape({cpu_out.numel()}).slice_rows(skip, cpu_out.numel());
  // Quantized rows take the tensor-core blocks as f16 tiles (attention_tc_quant.cuh): their
  // decoded values rounded once to f16, where the CPU keeps them in f32.
  EXPECT_LE(rel_error(a, b), c.quant.enabled() ? 1e-3 : 1e-5) << "against the CPU, " << describe(c);
}

void expect_pages_equal_contiguous(const Case& c) {
  std::mt19937 rng(static_cast<uint32_t>(c.page_tokens * 7 + c.window + c.quant.bits));
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {1, 1}, {1, 33}, {7, 70}, {1, 129}, {64, 64}, {1, 300}, {64, 500}, {1, 1000}};
  std::vector<HostSeq> seqs;
  int64_t n_rows = 1;  // row 0 belongs to no sequence
  for (auto [n_q, n_kv] : shapes) {
    seqs.push_back({n_q, n_kv, host_rows(c, n_kv, rng), host_rows(c, n_kv, rng)});
    n_rows += n_q;
  }
  const Tensor qh = random_host({n_rows, kHeads, kHeadDim}, DType::kF32, rng, 2.0f);
  std::vector<int32_t> positions(static_cast<size_t>(n_rows), 0);
  std::vector<ops::AttentionSeq> paged, contiguous;
  const PageSet pages = make_pages(c, seqs, paged, true);
  std::vector<Tensor> kd, vd;
  kd.reserve(seqs.size()), vd.reserve(seqs.size());
  for (size_t i = 0, row = 1; i < seqs.size(); row += static_cast<size_t>(seqs[i].n_q), ++i) {
    paged[i].q_begin = static_cast<int64_t>(row);
    for (int64_t t = 0; t < seqs[i].n_q; ++t)
      positions[row + static_cast<size_t>(t)] =
          static_cast<int32_t>(seqs[i].n_kv - seqs[i].n_q + t);
    kd.push_back(to_device(seqs[i].k)), vd.push_back(to_device(seqs[i].v));
    contiguous.push_back({&kd.back(), &vd.back(), paged[i].q_begin, seqs[i].n_q, seqs[i].n_kv});
  }
  ops::AttentionParams p{1.0f / std::sqrt(static_cast<float>(kHeadDim)), 0.0f, c.window};
  p.kv_quant = c.quant;
  const ops::KvPages kv{
      pages.table, 2 * pages.block_bytes, 3 * pages.block_bytes, c.page_tokens, kKvHeads, c.dtype};
  const Tensor q = to_device(qh);
  Tensor out_paged = poisoned_device(q.shape(), DType::kF32);
  Tensor out_contig = poisoned_device(q.shape(), DType::kF32);
  ops::attention_pages(q, kv, paged, positions, p, out_paged);
  ops::attention_seqs(q, contiguous, positions, p, out_contig);
  const Tensor got = to_host(out_paged), want = to_host(out_contig);
  const size_t row_bytes = static_cast<size_t>(kHeads * kHeadDim) * 4;
  EXPECT_EQ(std::memcmp(got.data<uint8_t>() + row_bytes, want.data<uint8_t>() + row_bytes,
                        got.nbytes() - row_bytes),
            0)
      << describe(c);
  for (size_t i = 0; i < row_bytes; ++i)
    ASSERT_EQ(got.data<uint8_t>()[i], 0xFF) << "row 0 belongs to no sequence, " << describe(c);

  expect_cpu_close(c, seqs, paged, qh, positions, p, got);
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (int64_t pt : {16, 32, 48})
    for (int32_t window : {0, 16}) {
      for (DType dt : {DType::kF32, DType::kBF16, DType::kF16}) out.push_back({dt, {}, pt, window});
      for (int32_t bits : {8, 4}) out.push_back({DType::kU8, {bits, 64}, pt, window});
    }
  // Pages of 1, 7 and 100 tokens: the page of a key is found by a multiply-high, not a
  // division (attention_math.cuh, PageDivisor), exact for every divisor.
  for (int64_t pt : {1, 7, 100}) out.push_back({DType::kBF16, {}, pt, 0});
  return out;
}

class AttentionPagesGpu : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionPagesGpu, EqualsContiguousRowsBitwise) {
  CAIRN_NEED_GPU();
  expect_pages_equal_contiguous(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionPagesGpu, ::testing::ValuesIn(all_cases()));

}  // namespace
}  // namespace cairn::gpu_test
