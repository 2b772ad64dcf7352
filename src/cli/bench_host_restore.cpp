#include "cli/bench_host_restore.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "backend/device.h"
#include "cli/bench_restore.h"
#include "core/median.h"
#include "model/config.h"

namespace cairn {

namespace {

using Clock = std::chrono::steady_clock;

double copy_gbs(DeviceBackend& dev, const Tensor& src, Tensor& dst) {
  std::vector<double> gbs;
  for (int i = 0; i < 6; ++i) {
    const auto t0 = Clock::now();
    dev.copy(src, dst);
    dev.synchronize();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (i > 0) gbs.push_back(static_cast<double>(src.nbytes()) / 1e9 / s);  // the first warms up
  }
  return median(gbs);
}

struct Link {
  double up = 0, down = 0;  // GB/s host → device, device → host
};

// One copy of n bytes between page-locked host memory and the device, each
// way (memcpy rates on the CPU), median of five.
Link link_gbs(Device d, size_t n) {
  DeviceBackend& dev = device_backend(d.kind);
  const auto shape = Shape{static_cast<int64_t>(n)};
  Tensor host = Tensor::view_of(dev.allocate_pinned_host(n), 0, shape, DType::kU8);
  Tensor device = Tensor::view_of(dev.allocate(n), 0, shape, DType::kU8);
  return {copy_gbs(dev, host, device), copy_gbs(dev, device, host)};
}

// Counters once n requests finished (published after each pass of the engine's loop).
EngineStats settled(const Engine& e, int64_t n) {
  EngineStats st = e.stats();
  for (; st.requests_finished < n; st = e.stats())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return st;
}

// Restores of the host tier, alternating two prompts. Each round copies a
// prompt's pages the pool's tier lost back into it, and evicts as many of the
// other prompt's pages into the host tier to make room.
struct Round {
  double ttft = 0, seconds = 0;  // the restore's wall time, evictions included
  int64_t in = 0, out = 0;       // bytes copied back, bytes evicted for room
  // Of the time page-locked copies of those bytes take at the measured rates.
  double share(const Link& l) const {
    return (static_cast<double>(in) / 1e9 / l.up + static_cast<double>(out) / 1e9 / l.down) /
           seconds;
  }
};

std::vector<Round> alternate(Engine& e, const std::vector<int32_t>& a,
                             const std::vector<int32_t>& b, int64_t done) {
  std::vector<Round> rs;
  EngineStats last = settled(e, done);
  for (int i = 0; i < 6; ++i) {
    Round r;
    r.ttft = first_token_seconds(e, i % 2 == 0 ? a : b);
    const EngineStats st = settled(e, done + 1 + i);
    r.seconds = std::max(st.host_restore_seconds - last.host_restore_seconds, 1e-9);
    r.in = st.host_restore_bytes - last.host_restore_bytes;
    r.out = st.host_restore_evicted_bytes - last.host_restore_evicted_bytes;
    rs.push_back(r);
    last = st;
  }
  return rs;
}

void print_rounds(const std::vector<Round>& rs, double cold, double pool_hit, const Link& link) {
  std::vector<double> ttft, shares, ms;
  for (const Round& r : rs) {
    ttft.push_back(r.ttft);
    shares.push_back(100.0 * r.share(link));
    ms.push_back(r.seconds * 1e3);
  }
  const Round& r = rs[rs.size() / 2];
  fmt::print("  TTFT cold prefill        {:9.4f} s\n", cold);
  fmt::print(
      "  TTFT from the host tier  {:9.4f} s  median of {} ({:.1f}x faster than "
      "recomputing)\n",
      median(ttft), ttft.size(), cold / median(ttft));
  fmt::print("  TTFT from the pool tier  {:9.4f} s\n", pool_hit);
  fmt::print(
      "  restore: {:.1f} MB copied back, {:.1f} MB evicted for room, in {:.2f} ms median "
      "({:.2f}-{:.2f})\n",
      static_cast<double>(r.in) / 1e6, static_cast<double>(r.out) / 1e6, median(ms),
      *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()));
  fmt::print(
      "  page-locked copies of those bytes at {:.1f} GB/s up, {:.1f} GB/s down would take "
      "{:.0f}% of that (median; {:.0f}-{:.0f}%)\n",
      link.up, link.down, median(shares), *std::min_element(shares.begin(), shares.end()),
      *std::max_element(shares.begin(), shares.end()));
}

}  // namespace

void run_host_restore_bench(Model& model, const EngineOptions& base, int64_t prompt_tokens) {
  const ModelConfig& cfg = model.config();
  const int64_t n = std::min<int64_t>(prompt_tokens, cfg.max_position_embeddings - 1);
  const std::vector<int32_t> a = random_prompt(n, cfg.vocab_size, 1),
                             b = random_prompt(n, cfg.vocab_size, 2);
  // A first engine measures one prompt's pages; the pool's prefix tier is then
  // sized to a prompt and a half, so each prompt pushes the other's pages out.
  EngineOptions o = base;
  o.prefix_cache_bytes = std::max(base.prefix_cache_bytes, base.kv_budget_bytes / 2);
  o.host_cache_bytes = 0;
  int64_t prompt_bytes = 0;
  double cold = 0;
  {
    Engine probe(model, nullptr, o);
    cold = first_token_seconds(probe, a);
    prompt_bytes = settled(probe, 1).prefix_cache_bytes;
  }
  o.prefix_cache_bytes = prompt_bytes + prompt_bytes / 2;
  o.host_cache_bytes = std::max(base.host_cache_bytes, 3 * prompt_bytes);
  fmt::print(
      "host restore: {} tokens, {:.1f} MB of KV pages; pool prefix tier {:.1f} MB, host "
      "tier {:.1f} MB\n",
      n, static_cast<double>(prompt_bytes) / 1e6, static_cast<double>(o.prefix_cache_bytes) / 1e6,
      static_cast<double>(o.host_cache_bytes) / 1e6);
  Engine e(model, nullptr, o);
  first_token_seconds(e, a);
  first_token_seconds(e, b);  // a's pages now wait in the host tier
  const std::vector<Round> rounds = alternate(e, a, b, 2);
  const double pool_hit = first_token_seconds(e, b);  // b's pages are in the pool's tier now
  print_rounds(rounds, cold, pool_hit, link_gbs(model.device(), static_cast<size_t>(prompt_bytes)));
}

}  // namespace cairn
