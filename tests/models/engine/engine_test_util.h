// Running requests through a real Engine and recording every row of logits a
// request sampled from (EngineOptions::logits_observer), for bit-for-bit
// comparisons.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/registry.h"

namespace cairn::test {

inline const std::string kStoriesDir = std::string(CAIRN_SHARED_DIR) + "/models/stories260K";
inline const std::string kDefaultModelDir = std::string(CAIRN_SOURCE_DIR) + "/models/default";
inline std::string fixture_dir(const std::string& family) {
  return std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + family + "/f32";
}

// Logit rows per request id, filled on the engine thread.
struct LogitsLog {
  std::mutex mu;
  std::map<uint64_t, std::vector<std::vector<float>>> rows;

  void attach(EngineOptions& o) {
    o.logits_observer = [this](uint64_t id, std::span<const float> l) {
      std::lock_guard<std::mutex> lock(mu);
      rows[id].emplace_back(l.begin(), l.end());
    };
  }
  // Takes the rows of id out (ids restart at 1 in every engine).
  std::vector<std::vector<float>> take(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::vector<float>> r = std::move(rows[id]);
    rows.erase(id);
    return r;
  }
};

struct Outcome {
  std::vector<int32_t> ids;
  std::vector<std::vector<float>> logits;
  Event final;
};

// prompt: len ids drawn from a hash of (salt, i) in [3, vocab).
inline std::vector<int32_t> test_prompt(int64_t len, uint32_t salt, int64_t vocab) {
  std::vector<int32_t> p;
  uint64_t x = 0x9e3779b97f4a7c15ull * (salt + 1);
  for (int64_t i = 0; i < len; ++i) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    p.push_back(static_cast<int32_t>(3 + x % static_cast<uint64_t>(vocab - 3)));
  }
  return p;
}

inline Request test_request(std::vector<int32_t> prompt, int32_t max_tokens, float temperature,
                            uint64_t seed) {
  Request r;
  r.prompt_ids = std::move(prompt);
  r.max_tokens = max_tokens;
  r.sampling.temperature = temperature;
  r.seed = seed;
  r.logprobs = 3;
  return r;
}

inline Outcome collect(const std::shared_ptr<RequestStream>& s, LogitsLog& log) {
  Outcome o;
  o.final = s->collect();
  for (const TokenOut& t : o.final.tokens) o.ids.push_back(t.id);
  o.logits = log.take(s->id());
  return o;
}

inline bool bit_equal_rows(const std::vector<std::vector<float>>& a,
                           const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  return true;
}

}  // namespace cairn::test
