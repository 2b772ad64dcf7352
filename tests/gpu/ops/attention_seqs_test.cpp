// CUDA attention_seqs against cuda attention per sequence, bit for bit: decode
// rows (n_kv 1 to 1000) beside prefill chunks of 7, 64 and 256, GQA 4, head_dim 64,
// 128 and 256, windows 0 and 16, softcaps 0 and 30, K/V f32, bf16 and f16, one
// sequence's K/V 2 or 4 bytes off a 16-byte boundary; both launch shapes (a
// decode-heavy batch takes the split path, a prefill-heavy one the fused path).
// Outputs poisoned.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/attention.h"
#include "backend/cuda/wgmma_gemm.h"
#include "backend/device.h"
#include "backend/ops.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

constexpr int64_t kHeads = 8, kKvHeads = 2;  // GQA 4

struct SeqShape {
  int64_t n_q, n_kv;
};

// Decode rows over every key-count boundary, beside chunks of 7 and 64.
const std::vector<SeqShape> kDecodeMix = {{1, 1},   {1, 2},   {1, 31},  {1, 32},   {1, 33},
                                          {7, 7},   {1, 127}, {1, 128}, {1, 129},  {64, 64},
                                          {1, 300}, {7, 260}, {1, 513}, {1, 1000}, {64, 1000}};
// The sequences of kDecodeMix with one query (a decode grid the narrow blocks take).
std::vector<SeqShape> decode_rows() {
  std::vector<SeqShape> decode;
  for (const SeqShape& s : kDecodeMix)
    if (s.n_q == 1) decode.push_back(s);
  return decode;
}

// Rows of 16 key splits and more (a block a row folds their partials), beside short ones.
const std::vector<SeqShape> kLongMix = {{1, 2048}, {1, 2049}, {1, 4100}, {3, 2500},
                                        {1, 129},  {1, 1},    {1, 777}};
// Mostly chunks of 256 and 64 (enough thread blocks to take the fused path with the CUDA-core
// blocks of 16 rows and the tensor-core blocks of 64), a few decode rows.
const std::vector<SeqShape> kPrefillMix = {
    {256, 256}, {64, 128}, {256, 512},  {1, 700},  {256, 300},  {256, 640}, {7, 7},     {256, 777},
    {1, 5},     {64, 900}, {256, 1000}, {64, 200}, {256, 1000}, {1, 999},   {256, 400}, {256, 900}};

// A device copy of host t starting `shift` bytes past its allocation (16-byte aligned).
Tensor shifted_device(const Tensor& t, size_t shift) {
  Tensor buf = empty_on({DeviceKind::kCuda, 0}, {t.numel() + 8}, t.dtype());
  Tensor view = Tensor::view_of(buf.storage(), shift, t.shape(), t.dtype());
  DeviceBackend& b = device_backend(DeviceKind::kCuda);
  b.copy(t, view);
  b.synchronize();
  return view;
}

struct Params {
  DType dtype;
  int64_t head_dim;
  int32_t window;
  float softcap;
};

std::string describe(const Params& c, const char* mix) {
  return std::string(mix) + " " + std::string(dtype_name(c.dtype)) + " head_dim " +
         std::to_string(c.head_dim) + " window " + std::to_string(c.window) + " softcap " +
         std::to_string(c.softcap);
}

// The sequences' query rows back to back after one row no sequence owns (row 0),
// listed in reverse row order; K/V buffers 3 rows longer than n_kv.
// alone_wide: the per-sequence calls' split blocks (cuda::set_attention_wide_blocks); the batch
// runs under the caller's setting. heads: query heads over kKvHeads KV heads.
void expect_bitwise_per_sequence(const std::vector<SeqShape>& shapes, const Params& c,
                                 const char* mix, int alone_wide = 0, int64_t heads = kHeads) {
  std::mt19937 rng(static_cast<uint32_t>(c.head_dim * 31 + c.window + shapes.size()));
  int64_t n_rows = 1;
  for (const SeqShape& s : shapes) n_rows += s.n_q;
  const Tensor q = to_device(random_host({n_rows, heads, c.head_dim}, DType::kF32, rng, 2.0f));
  std::vector<Tensor> ks, vs;
  std::vector<int32_t> positions(static_cast<size_t>(n_rows), 0);
  std::vector<ops::AttentionSeq> seqs;
  int64_t row = 1;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const SeqShape& s = shapes[i];
    const Tensor kh = random_host({s.n_kv + 3, kKvHeads, c.head_dim}, c.dtype, rng, 2.0f);
    const Tensor vh = random_host({s.n_kv + 3, kKvHeads, c.head_dim}, c.dtype, rng);
    const size_t shift = i == 2 ? dtype_bytes(c.dtype, 1) : 0;  // no 16-byte loads for it
    ks.push_back(shifted_device(kh, shift)), vs.push_back(shifted_device(vh, shift));
    for (int64_t t = 0; t < s.n_q; ++t)
      positions[static_cast<size_t>(row + t)] = static_cast<int32_t>(s.n_kv - s.n_q + t);
    row += s.n_q;
  }
  row = 1;
  for (size_t i = 0; i < shapes.size(); ++i) {
    seqs.insert(seqs.begin(), {&ks[i], &vs[i], row, shapes[i].n_q, shapes[i].n_kv});
    row += shapes[i].n_q;
  }
  const float scale = (c.softcap > 0.0f ? 4.0f : 1.0f) / std::sqrt(static_cast<float>(c.head_dim));
  const ops::AttentionParams p{scale, c.softcap, c.window};
  Tensor out = poisoned_device(q.shape(), DType::kF32);
  ops::attention_seqs(q, seqs, positions, p, out);
  const Tensor got = to_host(out);
  cuda::set_attention_wide_blocks(alone_wide);

  int64_t longest = 0;
  for (const SeqShape& s : shapes) longest = std::max(longest, s.n_kv);
  std::vector<int32_t> kv_positions(static_cast<size_t>(longest));
  for (size_t j = 0; j < kv_positions.size(); ++j) kv_positions[j] = static_cast<int32_t>(j);
  const std::span<const int32_t> qp(positions), kp(kv_positions);
  for (const ops::AttentionSeq& s : seqs) {
    Tensor alone = poisoned_device({s.n_q, heads, c.head_dim}, DType::kF32);
    ops::attention(q.slice_rows(s.q_begin, s.q_begin + s.n_q), s.k->slice_rows(0, s.n_kv),
                   s.v->slice_rows(0, s.n_kv),
                   qp.subspan(static_cast<size_t>(s.q_begin), static_cast<size_t>(s.n_q)),
                   kp.first(static_cast<size_t>(s.n_kv)), p, alone);
    const Tensor want = to_host(alone);
    const size_t bytes = want.nbytes();
    EXPECT_EQ(std::memcmp(got.data<float>() + s.q_begin * heads * c.head_dim, want.raw(), bytes), 0)
        << "n_q " << s.n_q << " n_kv " << s.n_kv << ", " << describe(c, mix);
  }
  const uint8_t* unowned = static_cast<const uint8_t*>(got.raw());
  for (int64_t i = 0; i < heads * c.head_dim * 4; ++i)
    ASSERT_EQ(unowned[i], 0xFF) << "row 0 belongs to no sequence, " << describe(c, mix);
}

class AttentionSeqsGpu : public ::testing::TestWithParam<Params> {};

TEST_P(AttentionSeqsGpu, DecodeMixEqualsAttentionPerSequence) {
  CAIRN_NEED_GPU();
  expect_bitwise_per_sequence(kDecodeMix, GetParam(), "decode mix");
}

// Split blocks walking 2 and 4 key splits each (a big grid's choice, forced here) give every
// row the bits of one split a block.
TEST_P(AttentionSeqsGpu, SplitsPerBlockLeaveTheBits) {
  CAIRN_NEED_GPU();
  for (int n : {2, 4}) {
    cuda::set_attention_splits_per_block(n);
    expect_bitwise_per_sequence(kDecodeMix, GetParam(),
                                n == 2 ? "2 splits a block" : "4 splits a block");
  }
  cuda::set_attention_splits_per_block(0);
}

// The four-warp blocks of small split grids (each key block attended by the four warps
// together) give every row the bits of the one-warp blocks.
TEST_P(AttentionSeqsGpu, WideBlocksLeaveTheBits) {
  CAIRN_NEED_GPU();
  cuda::set_attention_wide_blocks(-1);
  expect_bitwise_per_sequence(kDecodeMix, GetParam(), "one-warp batch, four-warp alone", 1);
  cuda::set_attention_wide_blocks(1);
  expect_bitwise_per_sequence(kDecodeMix, GetParam(), "four-warp batch, one-warp alone", -1);
  cuda::set_attention_wide_blocks(0);
}

// Decode batches on the narrow blocks (8 rows: GQA groups of 2, 4 and 8), each slot setting,
// give every row the bits of the 16-row blocks of the sequence alone (four-warp blocks there).
TEST_P(AttentionSeqsGpu, NarrowBlocksLeaveTheBits) {
  CAIRN_NEED_GPU();
  const std::vector<SeqShape> decode = decode_rows();
  cuda::set_attention_wide_blocks(-1);
  for (int slots : {1, 2}) {
    cuda::set_attention_narrow_blocks(slots);
    const std::string label = "narrow blocks, setting " + std::to_string(slots);
    for (int64_t heads : {4, 8, 16})
      expect_bitwise_per_sequence(decode, GetParam(), label.c_str(), 1, heads);
  }
  cuda::set_attention_narrow_blocks(-1);
  cuda::set_attention_wide_blocks(0);
}

// The split path's combine staged through shared memory (forced for every split grid, then by
// the splits), a block a row or a block for each 32 dims of a row, and on a warp a row gives
// every row the bits of the per-sequence call (a warp a row); 33,000 keys make 258 splits, more
// than a slice's chunk.
TEST_P(AttentionSeqsGpu, StagedCombineLeavesTheBits) {
  CAIRN_NEED_GPU();
  std::vector<SeqShape> shapes = kLongMix;
  shapes.push_back({1, 33000});
  for (bool slices : {true, false}) {
    cuda::set_attention_combine_slices(slices);
    for (int mode : {1, -1, 0}) {
      cuda::set_attention_staged_combine(mode);
      const std::string label =
          std::string("staged combine ") + std::to_string(mode) + (slices ? ", slices" : ", rows");
      expect_bitwise_per_sequence(shapes, GetParam(), label.c_str());
    }
  }
  cuda::set_attention_staged_combine(0);
  cuda::set_attention_combine_slices(true);
}

TEST_P(AttentionSeqsGpu, PrefillMixEqualsAttentionPerSequence) {
  CAIRN_NEED_GPU();
  expect_bitwise_per_sequence(kPrefillMix, GetParam(), "prefill mix");
}

// Twelve-warp fused blocks (head_dim 128's long prefills; forced for a grid that would take
// four-warp blocks: 25 chunks of 256 fill 300 of them, the fused path) give every row the bits
// of the per-sequence calls (each a split grid) and of four-warp blocks.
TEST_P(AttentionSeqsGpu, TwelveWarpFusedBlocksLeaveTheBits) {
  CAIRN_NEED_GPU();
  std::vector<SeqShape> chunks;
  for (int64_t i = 0; i < 25; ++i) chunks.push_back({256, 256 + 31 * i});
  for (int warps : {12, 4}) {
    cuda::set_attention_fused_warps(warps);
    const std::string label = std::to_string(warps) + "-warp fused blocks";
    expect_bitwise_per_sequence(chunks, GetParam(), label.c_str());
  }
  cuda::set_attention_fused_warps(0);
}

// Fast products (cuda::set_attention_fast_products) on every path: the decode mix on one-warp
// and four-warp blocks, decode rows on the narrow blocks, the prefill mix, twelve-warp fused
// blocks: every row has the bits of the per-sequence calls under the same products.
TEST_P(AttentionSeqsGpu, FastProductsKeepEveryPathsBits) {
  CAIRN_NEED_GPU();
  const SwitchScope fast(cuda::attention_fast_products, cuda::set_attention_fast_products, true);
  for (int wide : {-1, 1}) {
    cuda::set_attention_wide_blocks(wide);
    expect_bitwise_per_sequence(kDecodeMix, GetParam(), "fast products, decode mix", -wide);
  }
  cuda::set_attention_wide_blocks(-1);
  expect_bitwise_per_sequence(decode_rows(), GetParam(), "fast products, narrow blocks", 1, 8);
  cuda::set_attention_wide_blocks(0);
  expect_bitwise_per_sequence(kPrefillMix, GetParam(), "fast products, prefill mix");
  std::vector<SeqShape> chunks;
  for (int64_t i = 0; i < 25; ++i) chunks.push_back({256, 256 + 31 * i});
  cuda::set_attention_fused_warps(12);
  expect_bitwise_per_sequence(chunks, GetParam(), "fast products, 12-warp fused blocks");
  cuda::set_attention_fused_warps(0);
}

// Fused grids on warpgroup products (cuda::set_attention_warpgroup_products: on by default where
// the GPU has them) and on each warp's mma.sync, exact and fast, twelve-warp and four-warp
// blocks: every row has the bits of the per-sequence calls, which never take the warpgroup
// kernels. Head dims 64 and 128 run both; 256 and f32 only the mma.sync or CUDA-core blocks.
TEST_P(AttentionSeqsGpu, WarpgroupFusedBlocksLeaveTheBits) {
  CAIRN_NEED_GPU();
  if (!cuda::wgmma_gemm_available()) GTEST_SKIP() << "no warpgroup products on this GPU";
  const SwitchScope fast(cuda::attention_fast_products, cuda::set_attention_fast_products, false);
  const SwitchScope wg(cuda::attention_warpgroup_products, cuda::set_attention_warpgroup_products,
                       true);
  std::vector<SeqShape> chunks;
  for (int64_t i = 0; i < 25; ++i) chunks.push_back({256, 256 + 31 * i});
  for (bool on : {true, false})
    for (bool fast_products : {false, true}) {
      cuda::set_attention_warpgroup_products(on);
      cuda::set_attention_fast_products(fast_products);
      const std::string label = std::string(on ? "warpgroup" : "mma.sync") +
                                (fast_products ? " fast" : " exact") + " products";
      for (int warps : {12, 4}) {
        cuda::set_attention_fused_warps(warps);
        expect_bitwise_per_sequence(chunks, GetParam(), (label + ", fused blocks").c_str());
      }
      cuda::set_attention_fused_warps(0);
      expect_bitwise_per_sequence(kPrefillMix, GetParam(), (label + ", prefill mix").c_str());
    }
}

// Split grids combining in their last blocks (forced for every grid, and by the grid: small
// grids) and through a combine grid: every row has the per-sequence calls' bits on the
// tensor-core one-warp, four-warp and narrow blocks and (f32) the scalar blocks, GQA 4 and 8,
// each call twice (a count left unreset would leave the second call's rows poisoned).
TEST_P(AttentionSeqsGpu, LastBlockCombineLeavesTheBits) {
  CAIRN_NEED_GPU();
  for (int mode : {1, 0, -1}) {
    cuda::set_attention_last_block_combine(mode);
    const std::string label = "last-block combine " + std::to_string(mode);
    for (int wide : {-1, 1})
      for (int round = 0; round < 2; ++round) {
        cuda::set_attention_wide_blocks(wide);
        expect_bitwise_per_sequence(kDecodeMix, GetParam(), label.c_str(), -wide);
      }
    cuda::set_attention_wide_blocks(-1);
    for (int64_t heads : {8, 16})
      expect_bitwise_per_sequence(decode_rows(), GetParam(), label.c_str(), 1, heads);
  }
  cuda::set_attention_wide_blocks(0);
  cuda::set_attention_last_block_combine(0);
}

std::vector<Params> all_params() {
  std::vector<Params> out;
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t hd : {64, 128, 256})
      for (int32_t window : {0, 16})
        for (float cap : {0.0f, 30.0f}) out.push_back({dt, hd, window, cap});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, AttentionSeqsGpu, ::testing::ValuesIn(all_params()));

// Mean µs of one call of step on the GPU (5 warm-up calls, then 50 timed).
template <typename F>
double time_us(F&& step) {
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  for (int i = 0; i < 5; ++i) step();
  dev.synchronize();
  const int iters = 50;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) step();
  dev.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters * 1e6;
}

// FNV-1a of a tensor's bytes: builds compared on the same inputs must print the same.
uint64_t fnv_of(const Tensor& h) {
  uint64_t fnv = 1469598103934665603ull;
  for (size_t i = 0; i < h.nbytes(); ++i)
    fnv = (fnv ^ static_cast<const uint8_t*>(h.raw())[i]) * 1099511628211ull;
  return fnv;
}

// K and V rows [n, kv heads, head_dim] copied into pages of `page` tokens, each page a block of K
// rows then a block of V rows (the paged KV state's layout within one layer).
struct BenchPages {
  std::shared_ptr<Storage> memory;
  std::vector<const void*> table;
  size_t block_bytes = 0;
};

BenchPages bench_pages(const Tensor& k, const Tensor& v, int64_t page) {
  const int64_t n = k.dim(0), n_pages = (n + page - 1) / page;
  BenchPages bp;
  bp.block_bytes = k.nbytes() / static_cast<size_t>(n) * static_cast<size_t>(page);
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  bp.memory = dev.allocate(static_cast<size_t>(n_pages) * 2 * bp.block_bytes);
  for (int64_t i = 0; i < n_pages; ++i) {
    const size_t at = static_cast<size_t>(i) * 2 * bp.block_bytes;
    for (int which = 0; which < 2; ++which) {
      const Tensor src = (which == 0 ? k : v).slice_rows(i * page, std::min(n, (i + 1) * page));
      Tensor dst =
          Tensor::view_of(bp.memory, at + which * bp.block_bytes, src.shape(), src.dtype());
      dev.copy(src, dst);
    }
    bp.table.push_back(static_cast<const uint8_t*>(bp.memory->data()) + at);
  }
  dev.synchronize();
  return bp;
}

// The decode step's attention alone over the same rows, held contiguously and read through pages
// of `page` tokens (as the engine's paged state holds them): µs of each, and the same bits.
void bench_decode_paged(const Tensor& q, const std::vector<Tensor>& ks,
                        const std::vector<Tensor>& vs, const std::vector<ops::AttentionSeq>& seqs,
                        const std::vector<int32_t>& qp, const ops::AttentionParams& p, Tensor& out,
                        int64_t page) {
  const double contiguous = time_us([&] { ops::attention_seqs(q, seqs, qp, p, out); });
  const uint64_t want = fnv_of(to_host(out));
  std::vector<BenchPages> held;
  std::vector<const void*> table;
  std::vector<ops::AttentionSeq> paged;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int64_t n_kv = seqs[i].n_kv;
    held.push_back(bench_pages(ks[i].slice_rows(0, n_kv), vs[i].slice_rows(0, n_kv), page));
    paged.push_back(
        {nullptr, nullptr, seqs[i].q_begin, 1, n_kv, static_cast<int64_t>(table.size())});
    table.insert(table.end(), held.back().table.begin(), held.back().table.end());
  }
  const ops::KvPages kv{table, 0, held.front().block_bytes, page, ks.front().dim(1), DType::kBF16};
  const double us = time_us([&] { ops::attention_pages(q, kv, paged, qp, p, out); });
  const uint64_t got = fnv_of(to_host(out));
  std::printf("  attention alone: contiguous %.1f us/layer, pages of %lld tokens %.1f us/layer%s\n",
              contiguous, static_cast<long long>(page), us, got == want ? "" : " (OUTPUT DIFFERS)");
  EXPECT_EQ(got, want);
}

// One decode step of one layer at `batch` sequences of n_kv keys (32 heads over 8
// KV heads, head_dim 128, bf16 K/V): the K/V append and attention as one
// convert_rows and one attention_seqs, against a convert pair and an attention
// per sequence (the cache's former loop, without its position uploads).
void bench_decode(int64_t batch, int64_t n_kv) {
  const int64_t n_heads = 32, n_kv_heads = 8, hd = 128;
  std::mt19937 rng(3);
  const Tensor q = to_device(random_host({batch, n_heads, hd}, DType::kF32, rng));
  const Tensor k_new = to_device(random_host({batch, n_kv_heads, hd}, DType::kF32, rng));
  const Tensor kh = random_host({n_kv + 1, n_kv_heads, hd}, DType::kBF16, rng);
  std::vector<Tensor> ks, vs;
  for (int64_t i = 0; i < batch; ++i) ks.push_back(to_device(kh)), vs.push_back(to_device(kh));
  std::vector<int32_t> qp(static_cast<size_t>(batch), static_cast<int32_t>(n_kv - 1)), kp;
  for (int64_t j = 0; j < n_kv; ++j) kp.push_back(static_cast<int32_t>(j));
  std::vector<ops::AttentionSeq> seqs;
  std::vector<ops::RowCopy> copies;
  for (int64_t i = 0; i < batch; ++i) {
    seqs.push_back({&ks[static_cast<size_t>(i)], &vs[static_cast<size_t>(i)], i, 1, n_kv});
    copies.push_back({&k_new, i, &ks[static_cast<size_t>(i)], n_kv, 1});
    copies.push_back({&k_new, i, &vs[static_cast<size_t>(i)], n_kv, 1});
  }
  Tensor out = poisoned_device(q.shape(), DType::kF32);
  const ops::AttentionParams p{1.0f / std::sqrt(float(hd)), 0.0f, 0};
  const double batched = time_us([&] {
    ops::convert_rows(copies);
    ops::attention_seqs(q, seqs, qp, p, out);
  });
  // CAIRN_BENCH_DECODE set: the batched call alone (profilers see only its kernels).
  const bool loop = std::getenv("CAIRN_BENCH_DECODE") == nullptr;
  const double looped = !loop ? 0.0 : time_us([&] {
    for (int64_t i = 0; i < batch; ++i) {
      const size_t si = static_cast<size_t>(i);
      Tensor kd = ks[si].slice_rows(n_kv, n_kv + 1), vd = vs[si].slice_rows(n_kv, n_kv + 1);
      ops::convert(k_new.slice_rows(i, i + 1), kd);
      ops::convert(k_new.slice_rows(i, i + 1), vd);
      Tensor o = out.slice_rows(i, i + 1);
      ops::attention(q.slice_rows(i, i + 1), ks[si].slice_rows(0, n_kv), vs[si].slice_rows(0, n_kv),
                     std::span<const int32_t>(qp).subspan(si, 1), kp, p, o);
    }
  });
  const double kv_bytes = 2.0 * static_cast<double>(batch * n_kv * n_kv_heads * hd) * 2;
  std::printf(
      "attention_seqs decode bf16 batch %lld n_kv %lld: %.1f us/layer (%.0f GB/s of K/V); "
      "per sequence %.1f us/layer, output %016llx\n",
      static_cast<long long>(batch), static_cast<long long>(n_kv), batched,
      kv_bytes / batched / 1e3, looped, static_cast<unsigned long long>(fnv_of(to_host(out))));
  EXPECT_GT(batched, 0.0);
  // CAIRN_BENCH_DECODE_PAGE=P: the attention alone, contiguous and through pages of P tokens.
  if (const char* page = std::getenv("CAIRN_BENCH_DECODE_PAGE"))
    bench_decode_paged(q, ks, vs, seqs, qp, p, out, std::atoll(page));
}

// The sizes of CAIRN_BENCH_DECODE ("128x512,64x4096"), else the default list.
std::vector<std::pair<int64_t, int64_t>> decode_sizes() {
  return sizes_from_env("CAIRN_BENCH_DECODE",
                        {{1, 512}, {1, 4096}, {1, 32768}, {16, 512}, {128, 512}, {64, 4096}});
}

// The attention of one layer of a causal prefill of n tokens in one sequence (by default 32
// heads over 8 KV heads, head_dim 128, bf16 K/V, the keys already appended): µs and TFLOP/s of the
// q·k and p·v products over the causal half (2 · 2 · n²/2 · head_dim per head). With `page`
// tokens a page, K/V are read through a page table as the engine's paged state holds them
// (the output is the same bits: the page size never changes a result).
void bench_prefill(int64_t n, int64_t n_heads = 32, int64_t n_kv_heads = 8, int64_t hd = 128,
                   int64_t page = 0) {
  std::mt19937 rng(5);
  const Tensor q = to_device(random_host({n, n_heads, hd}, DType::kF32, rng));
  const Tensor k = to_device(random_host({n, n_kv_heads, hd}, DType::kBF16, rng));
  const Tensor v = to_device(random_host({n, n_kv_heads, hd}, DType::kBF16, rng));
  std::vector<int32_t> qp;
  for (int64_t j = 0; j < n; ++j) qp.push_back(static_cast<int32_t>(j));
  const std::vector<ops::AttentionSeq> seqs{{&k, &v, 0, n, n}};
  Tensor out = poisoned_device(q.shape(), DType::kF32);
  const ops::AttentionParams p{1.0f / std::sqrt(float(hd)), 0.0f, 0};
  double us = 0.0;
  if (page > 0) {
    const BenchPages bp = bench_pages(k, v, page);
    const ops::KvPages kv{bp.table, 0, bp.block_bytes, page, n_kv_heads, DType::kBF16};
    const std::vector<ops::AttentionSeq> paged{{nullptr, nullptr, 0, n, n, 0}};
    us = time_us([&] { ops::attention_pages(q, kv, paged, qp, p, out); });
  } else {
    us = time_us([&] { ops::attention_seqs(q, seqs, qp, p, out); });
  }
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * hd * n_heads;
  const uint64_t fnv = fnv_of(to_host(out));
  std::printf(
      "attention_seqs prefill bf16 n %lld, head_dim %lld%s: %.1f us/layer, %.1f TFLOP/s, output "
      "%016llx\n",
      static_cast<long long>(n), static_cast<long long>(hd), page > 0 ? ", paged" : "", us,
      flops / us / 1e6, static_cast<unsigned long long>(fnv));
  EXPECT_GT(us, 0.0);
}

TEST(DISABLED_AttentionSeqsBench, Prefill) {
  CAIRN_NEED_GPU();
  for (int64_t n : {1024, 4096, 8192}) bench_prefill(n);
  bench_prefill(4096, 16, 8, 256);      // Gemma-3-12B's attention
  bench_prefill(8192, 32, 8, 128, 32);  // as the engine reads it: pages of 32 tokens
  bench_prefill(8192, 32, 8, 128, 48);  // a page size that is not a power of two
}

TEST(DISABLED_AttentionSeqsBench, Decode) {
  CAIRN_NEED_GPU();
  const auto sizes = decode_sizes();
  ASSERT_FALSE(sizes.empty())
      << "CAIRN_BENCH_DECODE takes BATCHxKEYS[,BATCHxKEYS…], e.g. 1x512,128x512";
  const bool saved = cuda::attention_tensor_cores();
  for (bool tc : {true, false}) {
    if (!tc && std::getenv("CAIRN_BENCH_DECODE") != nullptr) break;  // the default path only
    cuda::set_attention_tensor_cores(tc);
    std::printf("tensor cores %s:\n", tc ? "on" : "off");
    for (auto [batch, n_kv] : sizes) bench_decode(batch, n_kv);
  }
  cuda::set_attention_tensor_cores(saved);
}

}  // namespace
}  // namespace cairn::gpu_test
