// Affine-quantized K/V on the GPU (ops::KvRowQuant): quantize_rows writes the CPU backend's
// bytes. attention_seqs over quantized rows equals, bit for bit, attention_seqs over the rows
// those bytes decode to (decoded here from the format's definition in ops.h): with the
// tensor-core switch on, the f16 rows RN_f16(code · scale + bias) (the tensor-core blocks stage
// quantized rows as those, attention_tc_quant.cuh); with it off, the f32 rows code · scale +
// bias (the CUDA-core blocks). Both on the split path and the fused path, and near the CPU op.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/attention.h"
#include "backend/ops.h"
#include "core/dtype.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

constexpr int64_t kHeads = 8, kKvHeads = 2;

// x rounded to the nearest f16 (ties to even; x within f16's range). Every value here is
// code · scale + bias of f16 scale and bias, exact in double (at most 48 bits apart).
double round_f16(double x) {
  if (x == 0.0) return x;
  const int e = std::max(std::ilogb(x), -14);  // below 2^-14: f16's subnormal spacing
  return std::ldexp(std::nearbyint(std::ldexp(x, 10 - e)), e - 10);
}

// The rows of u8 rows [n, kKvHeads, row_bytes] (host): code · scale + bias as f32 (dtype kF32),
// or that value rounded once to f16 (kF16).
Tensor decode_host(const Tensor& rows, int64_t head_dim, const ops::KvRowQuant& q, DType dtype) {
  const int64_t n_head_rows = rows.dim(0) * rows.dim(1), groups = head_dim / q.group_size;
  Tensor out = Tensor::empty({rows.dim(0), rows.dim(1), head_dim}, dtype);
  for (int64_t r = 0; r < n_head_rows; ++r) {
    const uint8_t* src = rows.data<uint8_t>() + r * q.row_bytes(head_dim);
    const auto* sb = reinterpret_cast<const uint16_t*>(src + head_dim * q.bits / 8);
    for (int64_t e = 0; e < head_dim; ++e) {
      const int code = q.bits == 8 ? src[e] : (src[e / 2] >> ((e & 1) * 4)) & 0xf;
      const float s = f16_to_f32(sb[e / q.group_size]);
      const float b = f16_to_f32(sb[groups + e / q.group_size]);
      const int64_t at = r * head_dim + e;
      if (dtype == DType::kF32)
        out.data<float>()[at] = static_cast<float>(code) * s + b;
      else
        out.data<uint16_t>()[at] =
            f32_to_f16(static_cast<float>(round_f16(static_cast<double>(code) * s + b)));
    }
  }
  return out;
}

// f32 rows quantized into a poisoned u8 tensor by `where`'s backend, in two row blocks.
Tensor quantized(const Tensor& rows, const ops::KvRowQuant& q, bool on_gpu) {
  const int64_t n = rows.dim(0), hd = rows.dim(2);
  Tensor src = on_gpu ? to_device(rows) : rows;
  Tensor dst = on_gpu ? poisoned_device({n, kKvHeads, q.row_bytes(hd)}, DType::kU8)
                      : Tensor::empty({n, kKvHeads, q.row_bytes(hd)}, DType::kU8);
  const int64_t half = n / 2;
  const std::vector<ops::RowCopy> copies = {{&src, half, &dst, half, n - half},
                                            {&src, 0, &dst, 0, half}};
  ops::quantize_rows(copies, q);
  return on_gpu ? to_host(dst) : dst;
}

std::vector<ops::KvRowQuant> formats(int64_t head_dim) {
  std::vector<ops::KvRowQuant> out;
  for (int32_t bits : {4, 8})
    for (int32_t g : {32, 64, 128})
      if (g <= head_dim) out.push_back({bits, g});
  return out;
}

TEST(KvQuantGpu, QuantizeRowsWritesTheCpuBytes) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(5);
  for (int64_t hd : {64, 128})
    for (const ops::KvRowQuant& q : formats(hd)) {
      Tensor rows = random_host({301, kKvHeads, hd}, DType::kF32, rng, 3.0f);
      rows.data<float>()[7] = 1e-30f;  // tiny ranges and a constant group
      for (int64_t e = 0; e < q.group_size; ++e) rows.data<float>()[hd + e] = 0.25f;
      float* zeros = rows.data<float>() + 2 * hd;  // a minimum tied between +0 and -0
      for (int64_t e = 0; e < q.group_size; ++e) zeros[e] = std::fabs(zeros[e]) + 0.5f;
      zeros[3] = 0.0f, zeros[5] = -0.0f, zeros[q.group_size - 1] = -0.0f;
      const Tensor cpu = quantized(rows, q, false), gpu = quantized(rows, q, true);
      ASSERT_EQ(std::memcmp(cpu.raw(), gpu.raw(), cpu.nbytes()), 0)
          << "bits " << q.bits << " group " << q.group_size << " head_dim " << hd;
    }
}

struct SeqShape {
  int64_t n_q, n_kv;
};

// One attention_seqs call's inputs: quantized K/V of `shapes` (device and host), the rows they
// decode to (device; f16 for the tensor-core blocks, f32 for the CUDA-core ones), q and positions.
struct QuantCase {
  int64_t hd;
  ops::KvRowQuant q;
  Tensor qh, qd;
  std::vector<Tensor> kq, vq, kq_dev, vq_dev, kf_dev, vf_dev;
  std::vector<int32_t> positions;
  std::vector<ops::AttentionSeq> quant, full, cpu;

  QuantCase(const std::vector<SeqShape>& shapes, int64_t head_dim, const ops::KvRowQuant& fmt,
            DType decoded, std::mt19937& rng)
      : hd(head_dim), q(fmt) {
    int64_t n_rows = 0;
    for (const SeqShape& s : shapes) n_rows += s.n_q;
    qh = random_host({n_rows, kHeads, hd}, DType::kF32, rng, 2.0f), qd = to_device(qh);
    const size_t n = shapes.size();
    for (auto* v : {&kq, &vq, &kq_dev, &vq_dev, &kf_dev, &vf_dev}) v->reserve(n);
    for (const SeqShape& s : shapes) {
      kq.push_back(quantized(random_host({s.n_kv, kKvHeads, hd}, DType::kF32, rng, 2.0f), q, true));
      vq.push_back(quantized(random_host({s.n_kv, kKvHeads, hd}, DType::kF32, rng), q, true));
      kq_dev.push_back(to_device(kq.back())), vq_dev.push_back(to_device(vq.back()));
      kf_dev.push_back(to_device(decode_host(kq.back(), hd, q, decoded)));
      vf_dev.push_back(to_device(decode_host(vq.back(), hd, q, decoded)));
      for (int64_t t = 0; t < s.n_q; ++t)
        positions.push_back(static_cast<int32_t>(s.n_kv - s.n_q + t));
    }
    for (size_t i = 0, row = 0; i < n; row += static_cast<size_t>(shapes[i].n_q), ++i) {
      const auto r = static_cast<int64_t>(row);
      quant.push_back({&kq_dev[i], &vq_dev[i], r, shapes[i].n_q, shapes[i].n_kv});
      full.push_back({&kf_dev[i], &vf_dev[i], r, shapes[i].n_q, shapes[i].n_kv});
      cpu.push_back({&kq[i], &vq[i], r, shapes[i].n_q, shapes[i].n_kv});
    }
  }
  ops::AttentionParams params(bool quantized_rows) const {
    ops::AttentionParams p{1.0f / std::sqrt(static_cast<float>(hd)), 0.0f, 0};
    if (quantized_rows) p.kv_quant = q;
    return p;
  }
  // The GPU op over the quantized rows (quantized_rows) or over the decoded ones, on the host.
  Tensor gpu(bool quantized_rows) const {
    Tensor out = poisoned_device(qh.shape(), DType::kF32);
    ops::attention_seqs(qd, quantized_rows ? quant : full, positions, params(quantized_rows), out);
    return to_host(out);
  }
  Tensor cpu_op() const {
    Tensor ref = Tensor::empty(qh.shape(), DType::kF32);
    ops::attention_seqs(qh, cpu, positions, params(true), ref);
    return ref;
  }
  std::string what() const {
    return "bits " + std::to_string(q.bits) + " group " + std::to_string(q.group_size) +
           " head_dim " + std::to_string(hd);
  }
};

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// attention_seqs over quantized K/V (GPU) against the same over the decoded rows (GPU, bitwise:
// f16 with the tensor-core switch on, f32 with it off) and against the CPU op over the quantized
// rows (bound: f32 error for the CUDA-core blocks, f16 rounding of K and V for the tensor-core).
void check_attention(const std::vector<SeqShape>& shapes, int64_t hd, const ops::KvRowQuant& q,
                     bool tensor_cores, std::mt19937& rng) {
  const QuantCase c(shapes, hd, q, tensor_cores ? DType::kF16 : DType::kF32, rng);
  const SwitchScope sw(cuda::attention_tensor_cores, cuda::set_attention_tensor_cores,
                       tensor_cores);
  const Tensor g = c.gpu(true), w = c.gpu(false);
  const std::string what = (tensor_cores ? "tensor cores, " : "CUDA cores, ") + c.what();
  EXPECT_TRUE(same_bits(g, w)) << what;
  EXPECT_LE(rel_error(g, c.cpu_op()), tensor_cores ? 1e-3 : 1e-5) << what;
}

TEST(KvQuantGpu, AttentionEqualsDecodedRowsBitwise) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(6);
  const std::vector<SeqShape> decode = {{1, 1}, {1, 33}, {1, 129}, {1, 700}, {7, 300}};
  const std::vector<SeqShape> prefill = {{64, 64},   {64, 300}, {64, 640}, {1, 900},
                                         {64, 1000}, {64, 200}, {64, 500}, {64, 777}};
  for (bool tensor_cores : {true, false})
    for (int64_t hd : {64, 128, 256})
      for (const ops::KvRowQuant& q : formats(hd)) {
        check_attention(decode, hd, q, tensor_cores, rng);
        check_attention(prefill, hd, q, tensor_cores, rng);
      }
}

// A setting of the tensor-core blocks' speed switches (backend/cuda/attention.h).
struct Blocks {
  const char* name;
  int wide, narrow, fused_warps;
  bool warpgroups;
};

// One arithmetic on every tensor-core block: decode rows on the four-warp blocks, the 16-row
// one-warp blocks and the narrow blocks (both slot settings), prefill chunks on the mma.sync
// fused blocks of four and twelve warps and the warpgroup ones, each against the f16 rows
// decoded on the host (bitwise) and against the first setting's output (bitwise: every block
// stages the same tiles).
TEST(KvQuantGpu, EveryTensorCoreBlockStagesTheSameTiles) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(7);
  std::vector<SeqShape> decode = {{1, 1}, {1, 33}, {1, 129}, {1, 700}, {1, 5000}};
  for (int64_t i = 0; i < 60; ++i) decode.push_back({1, 40 + 37 * i});  // a grid past 2 × SMs
  std::vector<SeqShape> prefill;
  for (int64_t i = 0; i < 25; ++i) prefill.push_back({256, 256 + 31 * i});
  const Blocks decode_blocks[] = {{"narrow, two slots", -1, 2, 0, true},
                                  {"narrow, one slot", -1, 1, 0, true},
                                  {"16-row split blocks", -1, 0, 0, true},
                                  {"four-warp split blocks", 1, 2, 0, true}};
  const Blocks prefill_blocks[] = {{"warpgroup fused", 0, 2, 4, true},
                                   {"mma.sync fused, four warps", 0, 2, 4, false},
                                   {"mma.sync fused, twelve warps", 0, 2, 12, false}};
  const SwitchScope sw(cuda::attention_tensor_cores, cuda::set_attention_tensor_cores, true);
  for (const ops::KvRowQuant& q : {ops::KvRowQuant{8, 64}, ops::KvRowQuant{4, 32}})
    for (int64_t hd : {64, 128, 256})
      for (bool is_decode : {true, false}) {
        const QuantCase c(is_decode ? decode : prefill, hd, q, DType::kF16, rng);
        std::optional<Tensor> first;  // the first setting's output
        for (const Blocks& b : is_decode ? std::span<const Blocks>(decode_blocks)
                                         : std::span<const Blocks>(prefill_blocks)) {
          cuda::set_attention_wide_blocks(b.wide), cuda::set_attention_narrow_blocks(b.narrow);
          cuda::set_attention_fused_warps(b.fused_warps);
          const SwitchScope wg(cuda::attention_warpgroup_products,
                               cuda::set_attention_warpgroup_products, b.warpgroups);
          const Tensor g = c.gpu(true);
          EXPECT_TRUE(same_bits(g, c.gpu(false))) << b.name << ", " << c.what();
          if (!first) first = g;
          EXPECT_TRUE(same_bits(g, *first)) << b.name << " against the first, " << c.what();
        }
      }
  cuda::set_attention_wide_blocks(0), cuda::set_attention_narrow_blocks(-1);
  cuda::set_attention_fused_warps(0);
}

}  // namespace
}  // namespace cairn::gpu_test
