// Affine-quantized K/V on the GPU (ops::KvRowQuant): quantize_rows writes the CPU backend's
// bytes; attention_seqs over quantized rows equals, bit for bit, attention_seqs over the f32
// rows those bytes decode to (decoded here from the format's definition in ops.h), on the
// split path and the fused path, and stays within f32 error of the CPU op.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/ops.h"
#include "core/dtype.h"
#include "gpu_test_util.h"

namespace cairn::gpu_test {
namespace {

constexpr int64_t kHeads = 8, kKvHeads = 2;

// The f32 rows of u8 rows [n, kKvHeads, row_bytes] (host): code · scale + bias.
Tensor decode_host(const Tensor& rows, int64_t head_dim, const ops::KvRowQuant& q) {
  const int64_t n_head_rows = rows.dim(0) * rows.dim(1), groups = head_dim / q.group_size;
  Tensor out = Tensor::empty({rows.dim(0), rows.dim(1), head_dim}, DType::kF32);
  for (int64_t r = 0; r < n_head_rows; ++r) {
    const uint8_t* src = rows.data<uint8_t>() + r * q.row_bytes(head_dim);
    const auto* sb = reinterpret_cast<const uint16_t*>(src + head_dim * q.bits / 8);
    for (int64_t e = 0; e < head_dim; ++e) {
      const int code = q.bits == 8 ? src[e] : (src[e / 2] >> ((e & 1) * 4)) & 0xf;
      const float s = f16_to_f32(sb[e / q.group_size]);
      const float b = f16_to_f32(sb[groups + e / q.group_size]);
      out.data<float>()[r * head_dim + e] = static_cast<float>(code) * s + b;
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

// attention_seqs over quantized K/V (GPU) against the same over the decoded f32 rows (GPU,
// bitwise) and against the CPU op over the quantized rows (f32 bound).
void check_attention(const std::vector<SeqShape>& shapes, int64_t hd, const ops::KvRowQuant& q,
                     std::mt19937& rng) {
  int64_t n_rows = 0;
  for (const SeqShape& s : shapes) n_rows += s.n_q;
  const Tensor qh = random_host({n_rows, kHeads, hd}, DType::kF32, rng, 2.0f);
  std::vector<Tensor> kq, vq, kq_dev, vq_dev, kf_dev, vf_dev;
  std::vector<int32_t> positions;
  for (const SeqShape& s : shapes) {
    kq.push_back(quantized(random_host({s.n_kv, kKvHeads, hd}, DType::kF32, rng, 2.0f), q, true));
    vq.push_back(quantized(random_host({s.n_kv, kKvHeads, hd}, DType::kF32, rng), q, true));
    kq_dev.push_back(to_device(kq.back())), vq_dev.push_back(to_device(vq.back()));
    kf_dev.push_back(to_device(decode_host(kq.back(), hd, q)));
    vf_dev.push_back(to_device(decode_host(vq.back(), hd, q)));
    for (int64_t t = 0; t < s.n_q; ++t)
      positions.push_back(static_cast<int32_t>(s.n_kv - s.n_q + t));
  }
  std::vector<ops::AttentionSeq> quant, full, cpu;
  for (size_t i = 0, row = 0; i < shapes.size(); row += shapes[i].n_q, ++i) {
    const auto r = static_cast<int64_t>(row);
    quant.push_back({&kq_dev[i], &vq_dev[i], r, shapes[i].n_q, shapes[i].n_kv});
    full.push_back({&kf_dev[i], &vf_dev[i], r, shapes[i].n_q, shapes[i].n_kv});
    cpu.push_back({&kq[i], &vq[i], r, shapes[i].n_q, shapes[i].n_kv});
  }
  ops::AttentionParams pq{1.0f / std::sqrt(static_cast<float>(hd)), 0.0f, 0};
  ops::AttentionParams pf = pq;
  pq.kv_quant = q;
  const Tensor qd = to_device(qh);
  Tensor got = poisoned_device(qh.shape(), DType::kF32),
         want = poisoned_device(qh.shape(), DType::kF32);
  ops::attention_seqs(qd, quant, positions, pq, got);
  ops::attention_seqs(qd, full, positions, pf, want);
  const Tensor g = to_host(got), w = to_host(want);
  EXPECT_EQ(std::memcmp(g.raw(), w.raw(), g.nbytes()), 0)
      << "bits " << q.bits << " group " << q.group_size << " head_dim " << hd;
  Tensor ref = Tensor::empty(qh.shape(), DType::kF32);
  ops::attention_seqs(qh, cpu, positions, pq, ref);
  EXPECT_LE(rel_error(g, ref), 1e-5) << "bits " << q.bits << " group " << q.group_size;
}

TEST(KvQuantGpu, AttentionEqualsDecodedRowsBitwise) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(6);
  const std::vector<SeqShape> decode = {{1, 1}, {1, 33}, {1, 129}, {1, 700}, {7, 300}};
  const std::vector<SeqShape> prefill = {{64, 64},   {64, 300}, {64, 640}, {1, 900},
                                         {64, 1000}, {64, 200}, {64, 500}, {64, 777}};
  for (int64_t hd : {64, 128})
    for (const ops::KvRowQuant& q : formats(hd)) {
      check_attention(decode, hd, q, rng);
      check_attention(prefill, hd, q, rng);
    }
}

}  // namespace
}  // namespace cairn::gpu_test
