#include "server/request_fields.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <random>

#include "server/api_error.h"
#include "server/json_fields.h"

namespace cairn::server {

namespace {

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
constexpr size_t kMaxStopStrings = 16;
constexpr size_t kMaxStopBytes = 256;

// logit_bias: {"token id": bias in [-100, 100]} with ids below the vocabulary size.
void read_logit_bias(const json& body, const ParseContext& ctx, Request& r) {
  const json* v = find_field(body, "logit_bias");
  if (!v) return;
  if (!v->is_object()) bad_field("logit_bias", "logit_bias must be an object {\"token id\": bias}");
  int32_t vocab = ctx.tokenizer ? ctx.tokenizer->vocab_size() : 0;
  for (const auto& [key, bias] : v->items()) {
    std::string param = "logit_bias." + key;
    int64_t id = -1;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0 || id >= vocab)
      bad_field(param, fmt::format("{}: the key must be a token id in [0, {})", param, vocab));
    double b = number_field(*v, key, -100, 100, 0, "logit_bias.");
    r.processors.logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(b));
  }
}

}  // namespace

void read_sampling(const json& body, const ParseContext& ctx, Request& r) {
  SamplingParams& s = r.sampling;
  s = ctx.sampling;
  s.temperature = static_cast<float>(number_field(body, "temperature", 0, 2, s.temperature));
  s.top_p = static_cast<float>(number_field(body, "top_p", 0, 1, s.top_p));
  if (s.top_p <= 0) bad_field("top_p", "top_p must be in (0, 1]");
  int64_t top_k = int_field(body, "top_k", -1, kMaxInt32, s.top_k);
  s.top_k = static_cast<int32_t>(top_k < 0 ? 0 : top_k);  // -1 = off, as vLLM
  s.min_p = static_cast<float>(number_field(body, "min_p", 0, 1, s.min_p));
  if (find_field(body, "seed")) {
    int64_t seed = int_field(body, "seed", std::numeric_limits<int64_t>::min(),
                             std::numeric_limits<int64_t>::max(), 0);
    r.seed = static_cast<uint64_t>(seed);
  } else {
    // Chosen here, below 2^53, so that a JavaScript client reads back the exact seed.
    thread_local std::mt19937_64 rng{std::random_device{}()};
    r.seed = rng() >> 11;
    r.seed_chosen = true;
  }
  ProcessorParams& p = r.processors;
  p.presence_penalty = static_cast<float>(number_field(body, "presence_penalty", -2, 2, 0));
  p.frequency_penalty = static_cast<float>(number_field(body, "frequency_penalty", -2, 2, 0));
  p.repetition_penalty =
      static_cast<float>(number_field(body, "repetition_penalty", 0, 10, ctx.repetition_penalty));
  if (p.repetition_penalty <= 0) bad_field("repetition_penalty", "repetition_penalty must be > 0");
  p.min_tokens = static_cast<int32_t>(int_field(body, "min_tokens", 0, kMaxInt32, 0));
  read_logit_bias(body, ctx, r);
}

void read_stop(const json& body, const std::string& name, Request& r) {
  const json* v = find_field(body, name);
  if (!v) return;
  auto add = [&](const json& s, const std::string& param) {
    if (!s.is_string()) bad_field(param, param + " must be a string");
    std::string text = s.get<std::string>();
    if (text.empty()) bad_field(param, param + " must not be empty");
    if (text.size() > kMaxStopBytes)
      bad_field(param, fmt::format("{} is longer than {} bytes", param, kMaxStopBytes));
    r.stop_strings.push_back(std::move(text));
  };
  if (v->is_string()) return add(*v, name);
  if (!v->is_array()) bad_field(name, name + " must be a string or a list of strings");
  if (v->size() > kMaxStopStrings)
    bad_field(name, fmt::format("{} holds more than {} strings", name, kMaxStopStrings));
  for (size_t i = 0; i < v->size(); ++i) add((*v)[i], fmt::format("{}[{}]", name, i));
}

void read_max_tokens(const json& body, std::initializer_list<const char*> names,
                     int64_t default_tokens, const ParseContext& ctx,
                     const std::string& prompt_param, Request& r) {
  int64_t n_prompt = static_cast<int64_t>(r.prompt_ids.size());
  if (n_prompt >= ctx.context_length)
    throw ApiError(400, "invalid_request_error",
                   fmt::format("the prompt holds {} tokens; the model's context is {}", n_prompt,
                               ctx.context_length),
                   prompt_param, "context_length_exceeded");
  const char* given = nullptr;
  for (const char* name : names)
    if (!given && find_field(body, name)) given = name;
  if (!given) {
    if (default_tokens < 0)
      bad_field(*names.begin(), fmt::format("{} is required", *names.begin()));
    int64_t room = ctx.context_length - n_prompt;
    r.max_tokens = static_cast<int32_t>(
        std::min<int64_t>(default_tokens == 0 ? room : std::min(default_tokens, room), kMaxInt32));
    return;
  }
  int64_t n = int_field(body, given, 1, kMaxInt32, 1);
  if (n_prompt + n > ctx.context_length)
    throw ApiError(400, "invalid_request_error",
                   fmt::format("{} prompt tokens + {} = {} exceeds the model's context of {}",
                               n_prompt, given, n_prompt + n, ctx.context_length),
                   given, "context_length_exceeded");
  r.max_tokens = static_cast<int32_t>(n);
}

void check_single_choice(const json& body) {
  int64_t n = int_field(body, "n", 1, kMaxInt32, 1);
  if (n != 1) bad_field("n", "n must be 1: one choice per request");
  int64_t best_of = int_field(body, "best_of", 1, kMaxInt32, 1);
  if (best_of != 1) bad_field("best_of", "best_of must be 1");
}

}  // namespace cairn::server
