#include "engine/checkpoint_key.h"

#include <bit>
#include <cstdint>
#include <vector>

#include "prefix/page_key.h"

namespace cairn {

namespace {

class Canon {
 public:
  void u64(uint64_t x) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<uint8_t>(x >> (8 * i)));
  }
  void i64(int64_t x) { u64(static_cast<uint64_t>(x)); }
  void f32(float x) { u64(std::bit_cast<uint32_t>(x)); }
  void str(std::string_view s) {
    u64(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  template <typename T>
  void ints(const std::vector<T>& v) {
    u64(v.size());
    for (T x : v) i64(x);
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace

PageKey checkpoint_key(const Request& r, bool seed_chosen, std::string_view model_fingerprint,
                       std::string_view kv_scheme) {
  Canon c;
  c.str("cairn generation checkpoint key 1");  // a new canonical form changes this
  c.str(model_fingerprint);
  c.str(kv_scheme);
  c.ints(r.prompt_ids);
  c.i64(r.max_tokens);
  const SamplingParams& s = r.sampling;
  c.f32(s.temperature), c.i64(s.top_k), c.f32(s.top_p), c.f32(s.min_p);
  c.str(seed_chosen ? "server-chosen" : "seed");
  c.u64(seed_chosen ? 0 : r.seed.value_or(0));
  const ProcessorParams& p = r.processors;
  c.u64(p.logit_bias.size());
  for (const auto& [id, bias] : p.logit_bias) c.i64(id), c.f32(bias);
  c.f32(p.repetition_penalty), c.i64(p.repetition_window);
  c.f32(p.presence_penalty), c.f32(p.frequency_penalty), c.i64(p.min_tokens);
  c.ints(r.stop_ids);
  c.u64(r.stop_strings.size());
  for (const std::string& stop : r.stop_strings) c.str(stop);
  c.i64(r.logprobs);
  c.u64(r.skip_special ? 1 : 0);
  return content_key(c.bytes());
}

}  // namespace cairn
