// Quality of quantized KV: mean KL(p_full ‖ p_quant) of next-token
// distributions over a 256-position run (fed one token at a time: the greedy
// continuation of the fixture's prompt under full-precision KV, teacher-forced
// for every scheme). Prints the table of docs/kv-quantization.md. Group sizes
// that do not divide head_dim are skipped; for these tiny models (head_dim 8,
// 16, 32) a row with the group equal to head_dim is added.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "kv/paged_kv.h"
#include "model/config.h"
#include "model/registry.h"

namespace cairn::test {
namespace {

struct Scheme {
  int bits, group;
  int64_t start;
};

std::vector<double> log_softmax(const float* x, int64_t n) {
  double m = x[0], s = 0;
  for (int64_t i = 1; i < n; ++i) m = std::max<double>(m, x[i]);
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = x[i] - m - std::log(s);
  return out;
}

// Runs ids one token at a time; returns the log-probabilities after each, and
// extends ids greedily to n_total when `extend`.
std::vector<std::vector<double>> run(Model& m, std::vector<int32_t>& ids, int64_t n_total,
                                     const Scheme* s, bool extend) {
  const ModelConfig& c = m.config();
  PagedKvOptions o;
  o.page_tokens = 32;
  if (s) o.quant.layers.assign(static_cast<size_t>(c.n_layers), affine_format(s->bits, s->group));
  if (s) o.quant.quant_start = s->start;
  PagedKvState kv(c, o);
  Tensor logits = Tensor::empty({1, c.vocab_size}, DType::kF32);
  std::vector<std::vector<double>> out;
  for (int64_t p = 0; p < n_total; ++p) {
    ForwardBatch b{{ids[static_cast<size_t>(p)]}, {static_cast<int32_t>(p)}, {{0, 0, 1, true}}};
    m.forward(b, kv, logits);
    out.push_back(log_softmax(logits.data<float>(), c.vocab_size));
    if (extend && static_cast<int64_t>(ids.size()) == p + 1 && p + 1 < n_total)
      ids.push_back(static_cast<int32_t>(
          std::max_element(logits.data<float>(), logits.data<float>() + c.vocab_size) -
          logits.data<float>()));
  }
  return out;
}

double mean_kl(const std::vector<std::vector<double>>& p,
               const std::vector<std::vector<double>>& q) {
  double total = 0;
  for (size_t t = 0; t < p.size(); ++t)
    for (size_t i = 0; i < p[t].size(); ++i) total += std::exp(p[t][i]) * (p[t][i] - q[t][i]);
  return total / static_cast<double>(p.size());
}

void report(const std::string& name, const std::string& path, std::vector<int32_t> ids) {
  std::unique_ptr<Model> m = load_model(path, {});
  const int64_t hd = m->config().head_dim;
  const int64_t n = std::min<int64_t>(256, m->config().max_position_embeddings);
  std::vector<std::vector<double>> ref = run(*m, ids, n, nullptr, true);
  std::vector<int> groups = {32, 64, 128};
  if (hd < 32) groups.push_back(static_cast<int>(hd));
  std::vector<Scheme> schemes;
  for (int bits : {8, 4})
    for (int g : groups) schemes.push_back({bits, g, 0});
  const int g64 = static_cast<int>(std::min<int64_t>(64, hd));
  for (int bits : {8, 4})
    for (int64_t start : {64, 128}) schemes.push_back({bits, g64, start});
  for (const Scheme& s : schemes) {
    if (hd % s.group != 0) continue;
    const double kl = mean_kl(ref, run(*m, ids, n, &s, false));
    std::printf("| %s | %d | %d | %ld | %ld | %.6f |\n", name.c_str(), s.bits, s.group,
                static_cast<long>(s.start), static_cast<long>(n), kl);
    EXPECT_TRUE(std::isfinite(kl) && kl >= -1e-9) << name;
    // The targets, where the model's head_dim allows their group size.
    if (s.bits == 8 && s.start == 0) {
      EXPECT_LE(kl, 0.005) << name << " 8-bit g" << s.group;
    }
    if (s.bits == 4 && s.group == 64 && s.start == 0) {
      EXPECT_LE(kl, 0.05) << name << " 4-bit g64";
    }
  }
}

TEST(KvQuality, KlTable) {
  std::printf("| model | bits | group | quant start | positions | mean KL |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const char* f : {"llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "phi3"}) {
    const std::string dir = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + f + "/f32";
    report(std::string(f), dir, {1, 5, 9, 13});
  }
  report("stories260K", std::string(CAIRN_SHARED_DIR) + "/models/stories260K", {1});
  // The default model: a trained model with head_dim 64, so g32 and g64 run as shipped.
  report("default", std::string(CAIRN_SOURCE_DIR) + "/models/default", {0});
}

}  // namespace
}  // namespace cairn::test
