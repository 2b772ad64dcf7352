// ops::sample_rows on the CPU: greedy rows give the argmax (lowest id on ties)
// and the log-softmax with its best entries, then -1 and 0; the processors edit
// the logits in place in the CPU's order and arithmetic; masked ids are never
// drawn; a row's results do not depend on the rows beside it; and every
// argument is checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backend/ops.h"
#include "core/error.h"
#include "expect_invalid.h"

namespace cairn {
namespace {

using test::expect_invalid;

struct Results {
  Tensor ids, lps, top_ids, top_lps;
};

Results run(Tensor& logits, const std::vector<ops::SampleRow>& rows, int64_t width) {
  const auto n = static_cast<int64_t>(rows.size());
  Results r{Tensor::empty({n}, DType::kI32), Tensor::empty({n}, DType::kF32),
            Tensor::empty({n, width}, DType::kI32), Tensor::empty({n, width}, DType::kF32)};
  ops::sample_rows(logits, rows, {&r.ids, &r.lps, &r.top_ids, &r.top_lps});
  return r;
}

Tensor rows_of(const std::vector<std::vector<float>>& v) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size()), static_cast<int64_t>(v[0].size())},
                           DType::kF32);
  for (size_t i = 0; i < v.size(); ++i)
    std::memcpy(t.data<float>() + i * v[0].size(), v[i].data(), v[i].size() * sizeof(float));
  return t;
}

Tensor copy_of(const Tensor& t) {
  Tensor c = Tensor::empty(t.shape(), t.dtype());
  std::memcpy(c.raw(), t.raw(), t.nbytes());
  return c;
}

TEST(SampleRows, GreedyGivesTheArgmaxAndTheLogSoftmax) {
  Tensor logits = rows_of({{1.0f, 3.0f, 3.0f, 2.0f}, {-0.0f, 0.0f, -1.0f, -2.0f}});
  std::vector<ops::SampleRow> rows(2);
  for (auto& r : rows) r.temperature = 0.0f, r.n_top = 3;
  rows[1].n_top = 5;  // more than the vocabulary: all four, then padding
  const Results r = run(logits, rows, 5);
  EXPECT_EQ(r.ids.data<int32_t>()[0], 1);
  EXPECT_EQ(r.ids.data<int32_t>()[1], 0);  // -0 and +0 tie: the lower id
  const double z = 2 * std::exp(3.0) + std::exp(1.0) + std::exp(2.0);
  EXPECT_NEAR(r.lps.data<float>()[0], 3.0 - std::log(z), 1e-6);
  const int32_t* top = r.top_ids.data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(top, top + 5), (std::vector<int32_t>{1, 2, 3, -1, -1}));
  EXPECT_EQ(std::vector<int32_t>(top + 5, top + 10), (std::vector<int32_t>{0, 1, 2, 3, -1}));
  EXPECT_NEAR(r.top_lps.data<float>()[2], 2.0 - std::log(z), 1e-6);
  EXPECT_EQ(r.top_lps.data<float>()[3], 0.0f);
}

TEST(SampleRows, ProcessorsEditTheLogitsInPlaceInOrder) {
  Tensor logits = rows_of({{2.0f, -2.0f, 1.0f, 0.5f, 3.0f}, {2.0f, -2.0f, 1.0f, 0.5f, 3.0f}});
  const std::vector<ops::LogitBias> bias = {{2, 0.25f}, {0, 1.0f}, {2, 0.5f}};
  const std::vector<int32_t> penalized = {0, 1};
  const std::vector<ops::IdCount> counted = {{2, 3}};
  const std::vector<int32_t> masked = {4};
  std::vector<ops::SampleRow> rows(2);
  ops::SampleRow& a = rows[0];
  a.temperature = 0.0f;
  a.bias = bias;                // id 0: 2 + 1 = 3; id 2: (1 + .25) + .5 = 1.75
  a.repetition_penalty = 2.0f;  // id 0: 3 / 2 = 1.5; id 1: -2 · 2 = -4
  a.penalized = penalized;
  a.presence_penalty = 0.25f;  // id 2: 1.75 − (0.1 · 3 + .25)
  a.frequency_penalty = 0.1f;
  a.counted = counted;
  a.masked = masked;           // id 4: −inf
  rows[1].temperature = 0.0f;  // no processors: untouched
  const Results r = run(logits, rows, 1);
  const float want2 = 1.75f - (0.1f * 3.0f + 0.25f);
  const float* l = logits.data<float>();
  EXPECT_EQ(l[0], 1.5f);
  EXPECT_EQ(l[1], -4.0f);
  EXPECT_EQ(l[2], want2);
  EXPECT_EQ(l[3], 0.5f);
  EXPECT_EQ(l[4], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(std::vector<float>(l + 5, l + 10), (std::vector<float>{2.0f, -2.0f, 1.0f, 0.5f, 3.0f}));
  EXPECT_EQ(r.ids.data<int32_t>()[0], want2 > 1.5f ? 2 : 0);
  EXPECT_EQ(r.ids.data<int32_t>()[1], 4);
}

TEST(SampleRows, MaskedIdsAreNeverDrawn) {
  const std::vector<int32_t> masked = {0, 1};
  std::vector<ops::SampleRow> rows(1);
  rows[0].masked = masked;
  rows[0].n_top = -1;
  for (uint64_t step = 0; step < 200; ++step) {
    Tensor logits = rows_of({{5.0f, 5.0f, 0.0f, 0.1f}});
    rows[0].step = step;
    const Results r = run(logits, rows, 0);
    EXPECT_GE(r.ids.data<int32_t>()[0], 2);
    EXPECT_EQ(r.lps.data<float>()[0], 0.0f);  // n_top < 0: no logprob
  }
}

// A random row's parameters: greedy or sampled, with or without cuts and lists.
ops::SampleRow random_row(std::mt19937& rng, const std::vector<int32_t>& ids) {
  ops::SampleRow r;
  const int mode = static_cast<int>(rng() % 5);
  r.temperature = mode == 0 ? 0.0f : 0.5f + static_cast<float>(rng() % 100) / 50.0f;
  if (mode >= 2) r.top_k = static_cast<int32_t>(rng() % 20);
  if (mode >= 3) r.top_p = 0.5f + static_cast<float>(rng() % 50) / 100.0f;
  if (mode >= 4) r.min_p = static_cast<float>(rng() % 20) / 100.0f;
  r.seed = rng(), r.step = rng() % 1000, r.n_top = static_cast<int32_t>(rng() % 6) - 1;
  r.repetition_penalty = 1.3f;
  r.penalized = std::span<const int32_t>(ids).first(static_cast<size_t>(rng() % 4));
  return r;
}

TEST(SampleRows, EachRowIsIndependentOfTheBatch) {
  std::mt19937 rng(5);
  const int64_t n = 9, vocab = 300;
  std::vector<int32_t> ids = {3, 77, 150, 299};
  std::vector<ops::SampleRow> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(random_row(rng, ids));
  std::normal_distribution<float> nd(0.0f, 3.0f);
  Tensor all = Tensor::empty({n, vocab}, DType::kF32);
  for (int64_t i = 0; i < all.numel(); ++i) all.data<float>()[i] = nd(rng);
  Tensor batch_in = copy_of(all);
  const Results batch = run(batch_in, rows, 4);
  for (int64_t i = 0; i < n; ++i) {
    Tensor one = copy_of(all.slice_rows(i, i + 1));
    const Results solo = run(one, {rows[static_cast<size_t>(i)]}, 4);
    EXPECT_EQ(solo.ids.data<int32_t>()[0], batch.ids.data<int32_t>()[i]) << i;
    EXPECT_EQ(std::memcmp(solo.lps.raw(), batch.lps.data<float>() + i, 4), 0) << i;
    EXPECT_EQ(std::memcmp(solo.top_ids.raw(), batch.top_ids.data<int32_t>() + 4 * i, 16), 0) << i;
    EXPECT_EQ(std::memcmp(solo.top_lps.raw(), batch.top_lps.data<float>() + 4 * i, 16), 0) << i;
    EXPECT_EQ(std::memcmp(one.raw(), batch_in.data<float>() + i * vocab, vocab * 4), 0) << i;
  }
}

TEST(SampleRows, ChecksItsArguments) {
  Tensor logits = Tensor::zeros({2, 8}, DType::kF32);
  Tensor ids = Tensor::empty({2}, DType::kI32), lps = Tensor::empty({2}, DType::kF32);
  Tensor top_ids = Tensor::empty({2, 3}, DType::kI32), top_lps = Tensor::empty({2, 3}, DType::kF32);
  const ops::SampleOutputs out{&ids, &lps, &top_ids, &top_lps};
  const std::vector<int32_t> twice = {1, 1}, outside = {8};
  const std::vector<ops::IdCount> zero = {{2, 0}};
  auto call = [&](auto edit, const ops::SampleOutputs& o) {
    std::vector<ops::SampleRow> rows(2);
    edit(rows[1]);
    ops::sample_rows(logits, rows, o);
  };
  auto expect = [&](auto edit, const char* needle) {
    expect_invalid([&] { call(edit, out); }, needle);
  };
  expect([](ops::SampleRow& r) { r.temperature = -1.0f; }, "temperature");
  expect([](ops::SampleRow& r) { r.temperature = NAN; }, "temperature");
  expect([](ops::SampleRow& r) { r.top_k = -2; }, "top_k");
  expect([](ops::SampleRow& r) { r.top_p = 0.0f; }, "top_p");
  expect([](ops::SampleRow& r) { r.min_p = 1.5f; }, "min_p");
  expect([](ops::SampleRow& r) { r.n_top = 257; }, "n_top");
  expect([](ops::SampleRow& r) { r.n_top = 4; }, "top_ids");  // wider than the outputs
  expect([](ops::SampleRow& r) { r.repetition_penalty = 0.0f; }, "repetition_penalty");
  expect([&](ops::SampleRow& r) { r.penalized = twice; }, "twice");
  expect([&](ops::SampleRow& r) { r.masked = outside; }, "outside");
  expect([&](ops::SampleRow& r) { r.counted = zero; }, "counts");
  auto none = [](ops::SampleRow&) {};
  Tensor wrong = Tensor::empty({2}, DType::kF32);
  expect_invalid([&] { call(none, {&wrong, &lps, &top_ids, &top_lps}); }, "out.ids");
  EXPECT_NO_THROW(call(none, {&ids, &lps, nullptr, nullptr}));  // no row asks for a list
  auto listed = [](ops::SampleRow& r) { r.n_top = 1; };
  expect_invalid([&] { call(listed, {&ids, &lps, nullptr, nullptr}); }, "top_ids");
  std::vector<ops::SampleRow> three(3);
  expect_invalid([&] { ops::sample_rows(logits, three, out); }, "rows");
  Tensor bf16 = Tensor::zeros({2, 8}, DType::kBF16);
  std::vector<ops::SampleRow> two(2);
  expect_invalid([&] { ops::sample_rows(bf16, two, out); }, "f32");
}

}  // namespace
}  // namespace cairn
