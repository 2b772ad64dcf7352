// Quantized pages, bf16-first conversion, schemes and their errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/error.h"
#include "kv/contiguous_cache.h"
#include "kv/paged_kv.h"
#include "kv_test_util.h"

namespace cairn::test {
namespace {

PagedKvOptions bf16_first(const ModelConfig& c, int bits, int gs, int64_t start) {
  PagedKvOptions o;
  o.page_tokens = 16;
  o.budget_bytes = int64_t{64} << 20;
  o.rollback_tokens = 16;
  o.full_store = KvStore::kBF16;
  o.quant = uniform_scheme(c, bits, gs, start);
  return o;
}

bool same_bytes(const SequenceExport& a, const SequenceExport& b) {
  if (a.groups.size() != b.groups.size()) return false;
  for (size_t g = 0; g < a.groups.size(); ++g) {
    if (a.groups[g].pages.size() != b.groups[g].pages.size()) return false;
    for (size_t i = 0; i < a.groups[g].pages.size(); ++i) {
      auto x = a.groups[g].pages[i].bytes, y = b.groups[g].pages[i].bytes;
      if (x.size() != y.size() || !std::equal(x.begin(), x.end(), y.begin())) return false;
    }
  }
  return true;
}

// Before the crossing append (and during it) reads equal the plain bf16
// cache's; after it, they equal a reference converted right after that append.
TEST(Bf16First, TransitionReadsAndBytes) {
  ModelConfig c = tiny_config({0, 8});
  for (int64_t start : {0, 24, 30}) {
    PagedKvState kv(c, bf16_first(c, 4, 32, start));
    PagedKvOptions plain_o = bf16_first(c, 4, 32, 0);
    plain_o.quant = {};
    PagedKvState plain(c, plain_o);
    PagedKvState ref(c, bf16_first(c, 4, 32, 1 << 30));  // converts only when told
    bool crossed = false;
    std::vector<SpanSpec> steps = {{0, 0, 10, 1}, {0, 10, 10, 1}, {0, 20, 10, 1}};
    for (int64_t p = 30; p < 40; ++p) steps.push_back({0, p, 1, 1});
    for (const SpanSpec& st : steps) {
      StepOut a = run_step(kv, c, {st}), r = run_step(ref, c, {st});
      StepOut p = run_step(plain, c, {st});
      if (!crossed) {
        ASSERT_TRUE(bit_equal(a, p)) << "start " << start << " at " << st.begin;
        ASSERT_TRUE(bit_equal(a, r));
      } else {
        ASSERT_TRUE(bit_equal(a, r)) << "start " << start << " at " << st.begin;
        EXPECT_FALSE(bit_equal(a, p));
      }
      const bool now = st.begin + st.n >= start;
      EXPECT_EQ(kv.is_quantized(0), now) << "start " << start << " after " << st.begin + st.n;
      if (now && !crossed) {
        ref.quantize_now(0);
        EXPECT_EQ(kv.min_reusable_tokens(0), st.begin + st.n);
        EXPECT_TRUE(same_bytes(kv.export_sequence(0), ref.export_sequence(0)));
      }
      crossed = now;
    }
    EXPECT_TRUE(same_bytes(kv.export_sequence(0), ref.export_sequence(0)));
    // Irreversible: a trim below the start keeps quantized pages and the floor.
    const int64_t floor = kv.min_reusable_tokens(0);
    kv.trim(0, 24);
    EXPECT_TRUE(kv.is_quantized(0));
    EXPECT_EQ(kv.min_reusable_tokens(0), floor);
  }
}

TEST(Bf16First, SequencesCrossIndependently) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, bf16_first(c, 8, 32, 20));
  run_step(kv, c, {{0, 0, 25, 1}, {1, 0, 10, 2}});
  EXPECT_TRUE(kv.is_quantized(0));
  EXPECT_FALSE(kv.is_quantized(1));
  run_step(kv, c, {{1, 10, 10, 2}, {0, 25, 1, 1}});
  EXPECT_TRUE(kv.is_quantized(1));
  kv.free_sequence(0);
  kv.free_sequence(1);
  EXPECT_EQ(kv.pool().used_bytes(), 0);
}

// Quantized reads stay close to full precision (8-bit much closer than 4-bit).
TEST(QuantizedPages, CloseToFullPrecision) {
  ModelConfig c = tiny_config({0}, 4, 2, 64);
  ContiguousKvCache ref(c, 1, 256);
  run_step(ref, c, {{0, 0, 100, 5}});
  StepOut exact = run_step(ref, c, {{0, 100, 1, 5}});
  for (int bits : {8, 4}) {
    PagedKvState kv(c, bf16_first(c, bits, 32, 0));
    run_step(kv, c, {{0, 0, 100, 5}});
    StepOut got = run_step(kv, c, {{0, 100, 1, 5}});
    float worst = 0;
    for (size_t i = 0; i < got[0].size(); ++i)
      worst = std::max(worst, std::abs(got[0][i] - exact[0][i]));
    EXPECT_LT(worst, bits == 8 ? 0.02f : 0.3f) << bits << " bits";
    EXPECT_GT(worst, 0.0f);
  }
}

// The budget is honest: 4-bit pages hold ~3.5x the tokens bf16 pages do.
TEST(QuantizedPages, BudgetHoldsMoreTokens) {
  ModelConfig c = tiny_config({0, 0}, 4, 2, 128);
  auto capacity = [&](int bits) {  // the longest sequence can_append allows
    PagedKvOptions o = bf16_first(c, bits, 64, 0);
    if (bits == 0) o.quant = {};
    o.budget_bytes = 1 << 20;
    PagedKvState kv(c, o);
    run_step(kv, c, {{0, 0, 1, 1}});
    int64_t lo = 0, hi = 1 << 20;
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (kv.can_append(0, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    return 1 + lo;
  };
  const double bf16 = static_cast<double>(capacity(0)), q4 = static_cast<double>(capacity(4));
  const double q8 = static_cast<double>(capacity(8));
  EXPECT_NEAR(q4 / bf16, 256.0 / 72.0, 0.1);  // bf16 256 B per head row; q4g64 64 + 8
  EXPECT_NEAR(q8 / bf16, 256.0 / 136.0, 0.1);
}

TEST(KvScheme, BadValuesAreNamed) {
  ModelConfig c = tiny_config({0, 0}, 4, 2, 96);
  auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { uniform_scheme(c, 3, 32, 0); }).find("bits 3"), std::string::npos);
  EXPECT_NE(message([&] { uniform_scheme(c, 4, 48, 0); }).find("group size 48"), std::string::npos);
  EXPECT_NE(message([&] { uniform_scheme(c, 4, 64, 0); }).find("head_dim 96"), std::string::npos);
  const std::string path = testing::TempDir() + "kv_config.json";
  auto write = [&](const char* text) { std::ofstream(path) << text; };
  write("[{\"layer_idx\": 1, \"bits\": 8, \"group_size\": 32}]");
  KvQuantScheme s = scheme_from_kv_config(c, path, KvStore::kBF16, 0);
  EXPECT_EQ(s.layers[0], full_format(KvStore::kBF16));
  EXPECT_EQ(s.layers[1], affine_format(8, 32));
  write("[{\"layer_idx\": 1, \"bits\": 8}");
  EXPECT_NE(message([&] { scheme_from_kv_config(c, path, KvStore::kBF16, 0); }).find(path),
            std::string::npos);
  write("[{\"layer_idx\": 1, \"bits\": 2, \"group_size\": 32}]");
  EXPECT_NE(message([&] { scheme_from_kv_config(c, path, KvStore::kBF16, 0); }).find("bits 2"),
            std::string::npos);
  write("[{\"layer_idx\": 9, \"bits\": 4, \"group_size\": 32}]");
  EXPECT_NE(message([&] { scheme_from_kv_config(c, path, KvStore::kBF16, 0); }).find("9"),
            std::string::npos);
  std::remove(path.c_str());
}

// A per-layer scheme: the listed layer quantizes, the other stays bf16 in the same page.
TEST(KvScheme, PerLayerPagesMixFormats) {
  ModelConfig c = tiny_config({0, 0}, 4, 2, 64);
  PagedKvOptions o = bf16_first(c, 4, 32, 0);
  o.quant.layers[0] = full_format(KvStore::kBF16);
  PagedKvState kv(c, o);
  PagedKvOptions plain = o;
  plain.quant = {};
  PagedKvState p(c, plain);
  run_step(kv, c, {{0, 0, 20, 1}});
  run_step(p, c, {{0, 0, 20, 1}});
  StepOut a = run_step(kv, c, {{0, 20, 1, 1}}), b = run_step(p, c, {{0, 20, 1, 1}});
  EXPECT_TRUE(bit_equal(a[0], b[0]));   // bf16 layer reads as before
  EXPECT_FALSE(bit_equal(a[1], b[1]));  // the quantized one does not
  EXPECT_EQ(kv.bytes_per_token(true), 2 * 2 * 128 + 2 * 2 * (32 + 8));
}

}  // namespace
}  // namespace cairn::test
