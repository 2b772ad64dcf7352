// CUDA sample_rows against its CPU entry (the sampler's arithmetic,
// backend/sample_row.h) at vocabularies of 32, 1000 and 128256: greedy ids
// exactly (ties included), sampled ids for at least 99% of random rows with
// every difference a boundary within rounding, logprobs and top lists within
// 1e-5; every processor bit for bit; a row's results alone equal to the same
// row among 127 others; outputs on the device equal to outputs on the host.
#include <gtest/gtest.h>

#include <random>

#include "sample_rows_util.h"

namespace cairn::gpu_test {
namespace {

constexpr double kLogprobBound = 1e-5;

// Within kLogprobBound, or the same value (both -inf: a candidate outside the
// distribution, where EXPECT_NEAR's difference would be NaN).
void expect_logprob_near(float gpu, float cpu, const std::string& what, int64_t row) {
  if (gpu == cpu) return;
  EXPECT_NEAR(gpu, cpu, kLogprobBound) << what << " row " << row;
}
constexpr int32_t kWidth = 20;

struct Tally {
  int rows = 0, same = 0, excused = 0;
};

// Row i of the GPU's results against the CPU's; a sampled row may differ only
// at a boundary (then nothing else of it is compared).
void compare_row(const Tensor& logits, std::span<const ops::SampleRow> rows, const Sampled& gpu,
                 const Sampled& cpu, int64_t i, Tally& t, const char* what) {
  const ops::SampleRow& r = rows[static_cast<size_t>(i)];
  const int64_t vocab = logits.dim(1);
  std::span<const float> row(cpu.logits.data<float>() + i * vocab, static_cast<size_t>(vocab));
  ++t.rows;
  const bool excusable = r.temperature > 0.0f && near_boundary(row, r);
  if (gpu.ids[i] != cpu.ids[i]) {
    EXPECT_TRUE(excusable) << what << " row " << i << ": id " << gpu.ids[i] << " vs the CPU's "
                           << cpu.ids[i] << " (T " << r.temperature << ", top_k " << r.top_k
                           << ", top_p " << r.top_p << ", min_p " << r.min_p << ")";
    ++t.excused;
    return;
  }
  ++t.same;
  if (excusable) return;  // the same id, but the nucleus may differ by an element
  expect_logprob_near(gpu.lps[i], cpu.lps[i], what, i);
  for (int64_t k = 0; k < kWidth; ++k) {
    const int64_t at = i * kWidth + k;
    ASSERT_EQ(gpu.top_ids[at], cpu.top_ids[at]) << what << " row " << i << " entry " << k;
    expect_logprob_near(gpu.top_lps[at], cpu.top_lps[at], what, i);
  }
}

// Random rows of one vocabulary in batches of `batch`, compared row by row.
Tally check_random(int64_t vocab, int64_t n, int64_t batch, uint32_t seed, bool greedy_only) {
  std::mt19937 rng(seed);
  Tally t;
  for (int64_t done = 0; done < n; done += batch) {
    const int64_t b = std::min(batch, n - done);
    Tensor logits = make_logits(b, vocab, rng, static_cast<Logits>(done % kMixedKinds), true);
    std::vector<ops::SampleRow> rows;
    for (int64_t i = 0; i < b; ++i) {
      rows.push_back(random_row(rng, kWidth));
      if (greedy_only) rows.back().temperature = 0.0f;
    }
    const Sampled cpu = sample_on(DeviceKind::kCpu, logits, rows, kWidth);
    const Sampled gpu = sample_on(DeviceKind::kCuda, logits, rows, kWidth);
    for (int64_t i = 0; i < b; ++i) compare_row(logits, rows, gpu, cpu, i, t, "random");
  }
  return t;
}

TEST(GpuSampleRows, GreedyEqualsTheCpuExactly) {
  CAIRN_NEED_GPU();
  for (int64_t vocab : {32, 1000, 128256}) {
    const Tally t = check_random(vocab, vocab > 100000 ? 96 : 600, 128, 7, true);
    EXPECT_EQ(t.same, t.rows) << "vocab " << vocab;
  }
}

TEST(GpuSampleRows, SampledIdsAgreeWithTheCpu) {
  CAIRN_NEED_GPU();
  for (int64_t vocab : {32, 1000, 128256}) {
    const Tally t = check_random(vocab, vocab > 100000 ? 256 : 1000, 128, 11, false);
    EXPECT_GE(t.same, t.rows * 99 / 100)
        << "vocab " << vocab << ": " << t.excused << " rows differ at a boundary";
  }
}

// Every processor, alone and together, with repeated bias ids and negative logits.
TEST(GpuSampleRows, ProcessorsEqualTheCpuBitForBit) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(13);
  for (int64_t vocab : {32, 1000, 128256}) {
    const int64_t n = 40;
    Tensor logits = make_logits(n, vocab, rng, Logits::kNormal, true);
    std::vector<std::vector<ops::LogitBias>> bias(n);
    std::vector<std::vector<int32_t>> penalized(n), masked(n);
    std::vector<std::vector<ops::IdCount>> counted(n);
    std::vector<ops::SampleRow> rows;
    for (int64_t i = 0; i < n; ++i) {
      ops::SampleRow r = random_row(rng, kWidth);
      auto id = [&] { return static_cast<int32_t>(rng() % vocab); };
      const int which = static_cast<int>(i % 5);  // 4: all of them
      if (which == 0 || which == 4)
        for (int k = 0; k < 6; ++k) bias[i].push_back({k < 2 ? 3 : id(), float(k) - 2.5f});
      std::vector<int32_t> distinct(static_cast<size_t>(vocab));
      for (int32_t k = 0; k < vocab; ++k) distinct[static_cast<size_t>(k)] = k;
      std::shuffle(distinct.begin(), distinct.end(), rng);
      if (which == 1 || which == 4)
        penalized[i].assign(distinct.begin(), distinct.begin() + std::min<int64_t>(vocab, 300));
      if (which == 2 || which == 4)
        for (int k = 0; k < std::min<int64_t>(vocab / 2, 50); ++k)
          counted[i].push_back({distinct[vocab - 1 - k], 1 + k % 4});
      if (which == 3 || which == 4) masked[i] = {distinct[0], distinct[1]};
      r.bias = bias[i], r.penalized = penalized[i], r.counted = counted[i], r.masked = masked[i];
      r.repetition_penalty = 1.3f, r.presence_penalty = 0.4f, r.frequency_penalty = -0.3f;
      rows.push_back(r);
    }
    const Sampled cpu = sample_on(DeviceKind::kCpu, logits, rows, kWidth);
    const Sampled gpu = sample_on(DeviceKind::kCuda, logits, rows, kWidth);
    ASSERT_EQ(std::memcmp(gpu.logits.raw(), cpu.logits.raw(), cpu.logits.nbytes()), 0)
        << "processed logits, vocab " << vocab;
    Tally t;
    for (int64_t i = 0; i < n; ++i) compare_row(logits, rows, gpu, cpu, i, t, "processors");
    EXPECT_GE(t.same, t.rows - 1) << "vocab " << vocab;
  }
}

bool same_row(const Sampled& a, int64_t i, const Sampled& b, int64_t j) {
  return a.ids[i] == b.ids[j] && std::memcmp(&a.lps[i], &b.lps[j], 4) == 0 &&
         std::memcmp(&a.top_ids[i * kWidth], &b.top_ids[j * kWidth], 4 * kWidth) == 0 &&
         std::memcmp(&a.top_lps[i * kWidth], &b.top_lps[j * kWidth], 4 * kWidth) == 0;
}

TEST(GpuSampleRows, ARowAloneEqualsTheSameRowAmong127Others) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(17);
  const int64_t n = 128, vocab = 128256;
  Tensor logits = make_logits(n, vocab, rng, Logits::kNormal, true);
  std::vector<ops::SampleRow> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(random_row(rng, kWidth));
  const Sampled all = sample_on(DeviceKind::kCuda, logits, rows, kWidth);
  for (int64_t i : {0, 1, 5, 17, 64, 100, 127}) {
    const Tensor one = host_copy(logits.slice_rows(i, i + 1));
    const Sampled solo =
        sample_on(DeviceKind::kCuda, one, {&rows[static_cast<size_t>(i)], 1}, kWidth);
    EXPECT_TRUE(same_row(all, i, solo, 0)) << "row " << i;
  }
  // The batch reversed: every row keeps its results.
  std::vector<ops::SampleRow> reversed(rows.rbegin(), rows.rend());
  Tensor flipped = Tensor::empty({n, vocab}, DType::kF32);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(flipped.data<float>() + i * vocab, logits.data<float>() + (n - 1 - i) * vocab,
                vocab * 4);
  const Sampled back = sample_on(DeviceKind::kCuda, flipped, reversed, kWidth);
  for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(same_row(all, i, back, n - 1 - i)) << "row " << i;
}

TEST(GpuSampleRows, DeviceOutputsEqualHostOutputs) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(19);
  const int64_t n = 33, vocab = 1000;
  Tensor logits = make_logits(n, vocab, rng, Logits::kPeaked, true);
  std::vector<ops::SampleRow> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(random_row(rng, kWidth));
  const Sampled host = sample_on(DeviceKind::kCuda, logits, rows, kWidth, false);
  const Sampled device = sample_on(DeviceKind::kCuda, logits, rows, kWidth, true);
  for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(same_row(host, i, device, i)) << "row " << i;
}

// Full-vocabulary rows whose candidates do not fit one sorted run: all ties
// (one value), ties at a few values, a narrow band (bins split again by key).
TEST(GpuSampleRows, TiesAndNarrowRowsAtFullVocabulary) {
  CAIRN_NEED_GPU();
  std::mt19937 rng(23);
  const int64_t vocab = 128256;
  for (Logits kind : {Logits::kConstant, Logits::kTies, Logits::kNarrow, Logits::kMasked}) {
    Tensor logits = make_logits(16, vocab, rng, kind, false);
    std::vector<ops::SampleRow> rows;
    for (int64_t i = 0; i < 16; ++i) {
      ops::SampleRow r = random_row(rng, kWidth);
      r.n_top = i % 2 ? kWidth : r.n_top;
      if (i < 4) r.temperature = 0.0f;
      rows.push_back(r);
    }
    const Sampled cpu = sample_on(DeviceKind::kCpu, logits, rows, kWidth);
    const Sampled gpu = sample_on(DeviceKind::kCuda, logits, rows, kWidth);
    Tally t;
    for (int64_t i = 0; i < 16; ++i) compare_row(logits, rows, gpu, cpu, i, t, "full vocabulary");
    // Constant rows: a top-p nucleus ends exactly at the threshold (excused above).
    if (kind != Logits::kConstant) {
      EXPECT_GE(t.same, 15) << "kind " << static_cast<int>(kind);
    }
  }
}

}  // namespace
}  // namespace cairn::gpu_test
