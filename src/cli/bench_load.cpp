// cairn bench --load: synthetic load on the in-process engine. Clients (one
// thread each, `--concurrency` of them) send requests back to back until
// `--requests` are done; prompt and output lengths are drawn uniformly from
// ranges, and a fraction of prompts starts with one shared prefix. Prints, per
// configuration: throughput, TTFT and inter-token latency p50/p99, the prefix
// hit rate, and the weight bytes the decode steps streamed against the
// measured memory bandwidth; then the ratios between configurations.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "backend/cpu/machine_limits.h"
#include "cli/bench_load.h"
#include "cli/loaded_model.h"
#include "core/error.h"
#include "model/config.h"

namespace cairn {
namespace {

using Clock = std::chrono::steady_clock;

struct Range {
  int64_t lo = 0, hi = 0;
};

Range parse_range(const std::string& s, const char* flag) {
  const size_t colon = s.find(':');
  try {
    Range r{std::stoll(s.substr(0, colon)),
            colon == std::string::npos ? std::stoll(s) : std::stoll(s.substr(colon + 1))};
    if (r.lo >= 1 && r.hi >= r.lo) return r;
  } catch (const std::exception&) {
  }
  fail(ErrorCode::kInvalidArgument, "{}: '{}' is not N or MIN:MAX with 1 ≤ MIN ≤ MAX", flag, s);
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int64_t draw(const Range& r, uint64_t key) {
  return r.lo + static_cast<int64_t>(mix(key) % static_cast<uint64_t>(r.hi - r.lo + 1));
}

std::vector<int32_t> random_ids(int64_t n, uint64_t key, int64_t vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    ids[static_cast<size_t>(i)] = static_cast<int32_t>(
        3 + mix(key * 1000003 + static_cast<uint64_t>(i)) % static_cast<uint64_t>(vocab - 3));
  return ids;
}

struct Timings {
  std::vector<double> ttft_s, itl_s;
  int64_t generated = 0, prompt = 0;
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

Request make_request(const LoadFlags& f, int64_t i, int64_t vocab) {
  const uint64_t key = static_cast<uint64_t>(i) + 1;
  Request r;
  const bool shared = static_cast<double>(mix(key * 7) % 10000) < f.shared_fraction * 10000.0;
  if (shared && f.shared_prefix_tokens > 0)
    r.prompt_ids = random_ids(f.shared_prefix_tokens, 0, vocab);
  const std::vector<int32_t> own =
      random_ids(draw(parse_range(f.prompt_tokens, "--prompt-tokens"), key), key, vocab);
  r.prompt_ids.insert(r.prompt_ids.end(), own.begin(), own.end());
  r.max_tokens =
      static_cast<int32_t>(draw(parse_range(f.output_tokens, "--output-tokens"), key * 3));
  r.sampling.temperature = 0.0f;  // every request runs to max_tokens: no stop ids
  r.seed = key;
  return r;
}

// One client: sends its share of requests one after another, timing each token.
void client(Engine& e, const LoadFlags& f, std::atomic<int64_t>& next, Timings& t) {
  const int64_t vocab = e.model_config().vocab_size;
  for (int64_t i = next++; i < f.requests; i = next++) {
    Request r = make_request(f, i, vocab);
    t.prompt += static_cast<int64_t>(r.prompt_ids.size());
    const auto t0 = Clock::now();
    auto last = t0;
    bool first = true;
    auto s = e.submit(std::move(r));
    Event ev;
    while (s->next(ev, std::chrono::minutes(10))) {
      if (ev.tokens.empty()) continue;
      const auto now = Clock::now();
      const double dt = std::chrono::duration<double>(now - last).count();
      (first ? t.ttft_s : t.itl_s).push_back(dt);
      for (size_t k = 1; k < ev.tokens.size(); ++k) t.itl_s.push_back(0.0);  // merged events
      t.generated += static_cast<int64_t>(ev.tokens.size());
      first = false;
      last = now;
    }
  }
}

}  // namespace

LoadResult run_load(Model& model, const LoadFlags& f, int concurrency, bool prefix_cache,
                    const EngineOptions& base) {
  EngineOptions o = base;
  if (!prefix_cache) o.prefix_cache_bytes = 0;
  Engine e(model, nullptr, o);
  if (prefix_cache && f.shared_prefix_tokens > 0) {  // warm the cache with the shared prefix
    Request warm;
    warm.prompt_ids = random_ids(f.shared_prefix_tokens, 0, model.config().vocab_size);
    warm.prompt_ids.push_back(3);
    warm.max_tokens = 1;
    warm.sampling.temperature = 0.0f;
    e.submit(std::move(warm))->collect();
  }
  const EngineStats before = e.stats();
  std::vector<Timings> per(static_cast<size_t>(concurrency));
  std::atomic<int64_t> next{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < concurrency; ++c)
    threads.emplace_back([&, c] { client(e, f, next, per[static_cast<size_t>(c)]); });
  for (std::thread& th : threads) th.join();
  LoadResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  Timings all;
  for (Timings& t : per) {
    all.ttft_s.insert(all.ttft_s.end(), t.ttft_s.begin(), t.ttft_s.end());
    all.itl_s.insert(all.itl_s.end(), t.itl_s.begin(), t.itl_s.end());
    all.generated += t.generated;
    all.prompt += t.prompt;
  }
  const EngineStats after = e.stats();
  r.generated = all.generated;
  r.prompt = all.prompt;
  r.steps = after.steps - before.steps;
  r.ttft_p50 = percentile(all.ttft_s, 0.5);
  r.ttft_p99 = percentile(all.ttft_s, 0.99);
  r.itl_p50 = percentile(all.itl_s, 0.5);
  r.itl_p99 = percentile(all.itl_s, 0.99);
  r.prefix_queries = after.prefix_queries - before.prefix_queries;
  r.prefix_hits = after.prefix_hits - before.prefix_hits;
  r.prefix_hit_tokens = after.prefix_hit_tokens - before.prefix_hit_tokens;
  return r;
}

namespace {

void print_result(int concurrency, bool cache, const LoadResult& r, double weight_bytes,
                  double bandwidth_gbs) {
  const double gbs = static_cast<double>(r.steps) * weight_bytes / r.seconds / 1e9;
  fmt::print(
      "concurrency {:>3} cache {:>3} | {:>4} req {:6.2f} s | generated {:8.1f} tok/s, prompt "
      "{:8.1f} tok/s | TTFT p50 {:7.1f} ms p99 {:7.1f} ms | ITL p50 {:6.1f} ms p99 {:6.1f} ms | "
      "prefix hits {}/{} ({} tokens) | weights {:5.2f} GB/s = {:4.1f}% of bandwidth\n",
      concurrency, cache ? "on" : "off", r.prefix_queries, r.seconds,
      static_cast<double>(r.generated) / r.seconds, static_cast<double>(r.prompt) / r.seconds,
      r.ttft_p50 * 1e3, r.ttft_p99 * 1e3, r.itl_p50 * 1e3, r.itl_p99 * 1e3, r.prefix_hits,
      r.prefix_queries, r.prefix_hit_tokens, gbs, 100.0 * gbs / bandwidth_gbs);
}

}  // namespace

void print_load_bench(Model& model, const LoadFlags& f, const EngineOptions& base,
                      double weight_bytes, double bandwidth_gbs) {
  if (f.prefix_cache != "on" && f.prefix_cache != "off" && f.prefix_cache != "both")
    fail(ErrorCode::kInvalidArgument, "--prefix-cache: '{}' is not on, off or both",
         f.prefix_cache);
  fmt::print("{} requests: prompt {} tokens (+{} shared by {:.0f}%), output {} tokens\n",
             f.requests, f.prompt_tokens, f.shared_prefix_tokens, 100.0 * f.shared_fraction,
             f.output_tokens);
  std::vector<bool> caches;
  if (f.prefix_cache != "on") caches.push_back(false);
  if (f.prefix_cache != "off") caches.push_back(true);
  double first_rate = 0, ttft_off = 0;
  for (int c : f.concurrency) {
    for (bool cache : caches) {
      const LoadResult r = run_load(model, f, c, cache, base);
      print_result(c, cache, r, weight_bytes, bandwidth_gbs);
      const double rate = static_cast<double>(r.generated) / r.seconds;
      if (first_rate == 0)
        first_rate = rate;
      else if (caches.size() == 1)
        fmt::print("  aggregate generation at concurrency {}: {:.2f}x concurrency {}\n", c,
                   rate / first_rate, f.concurrency.front());
      if (!cache)
        ttft_off = r.ttft_p50;
      else if (ttft_off > 0)
        fmt::print("  TTFT p50 with the prefix cache: {:.2f}x lower than without\n",
                   ttft_off / r.ttft_p50);
    }
  }
}

}  // namespace cairn
