#include "cli/bench_restore.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/median.h"
#include "model/config.h"
#include "prefix/disk_bandwidth.h"

namespace cairn {

using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

double first_token_seconds(Engine& e, const std::vector<int32_t>& prompt) {
  Request r;
  r.prompt_ids = prompt;
  r.max_tokens = 1;
  r.sampling.temperature = 0;
  const auto t0 = Clock::now();
  std::shared_ptr<RequestStream> s = e.submit(std::move(r));
  Event ev;
  while (!s->next(ev, std::chrono::seconds(1)) || ev.tokens.empty()) {
  }
  const double t = since(t0);
  s->collect();
  return t;
}

std::vector<int32_t> random_prompt(int64_t n, int64_t vocab, uint64_t seed) {
  std::vector<int32_t> p;
  uint64_t x = seed | 1;
  for (int64_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    p.push_back(static_cast<int32_t>(3 + x % static_cast<uint64_t>(vocab - 3)));
  }
  return p;
}

namespace {

// One restart: the engine rebuilds its index, serves a short unrelated prompt
// (first-request costs), then the long prompt restored from the SSD tier.
struct Round {
  bool overlapped = false;  // the request ran while later layers were read
  double restart_s = 0, ttft_s = 0, ram_ttft_s = 0;
  double restore_s = 0, copy_s = 0;  // wall from its start until read; engine-thread copies
  int64_t pages = 0, bytes = 0, files = 0;
  double mb_per_s() const { return static_cast<double>(bytes) / 1e6 / restore_s; }
};

// The engine's counters once n requests finished (the engine thread publishes
// them after each pass of its loop).
EngineStats settled_stats(const Engine& e, int64_t n) {
  EngineStats st = e.stats();
  for (; st.requests_finished < n; st = e.stats())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return st;
}

Round restore_round(Model& model, const EngineOptions& o, const std::vector<int32_t>& prompt,
                    bool with_ram) {
  Round r;
  r.overlapped = o.restore_overlap;
  const auto t0 = Clock::now();
  Engine e(model, nullptr, o);
  r.restart_s = since(t0);
  r.files = e.stats().ssd_files;
  first_token_seconds(e, random_prompt(64, model.config().vocab_size / 2));
  const EngineStats before = settled_stats(e, 1);  // its own pages may come from disk too
  r.ttft_s = first_token_seconds(e, prompt);
  const EngineStats st = settled_stats(e, 2);
  if (with_ram)
    r.ram_ttft_s = first_token_seconds(e, prompt);  // the same prefix, now in the RAM tier
  r.restore_s = std::max(st.ssd_restore_wall_seconds - before.ssd_restore_wall_seconds, 1e-9);
  r.copy_s = st.ssd_restore_copy_seconds - before.ssd_restore_copy_seconds;
  r.pages = st.ssd_restored_pages - before.ssd_restored_pages;
  r.bytes = st.ssd_restore_bytes - before.ssd_restore_bytes;
  return r;
}

std::vector<double> ttfts_of(const std::vector<Round>& rs, bool overlapped) {
  std::vector<double> v;
  for (const Round& r : rs)
    if (r.overlapped == overlapped) v.push_back(r.ttft_s);
  return v;
}

// Overlapped and waiting rounds alternate (the disk's own cache warms alike):
// their TTFTs, and the median of the pairs' differences.
void print_overlap(const std::vector<Round>& rs) {
  const std::vector<double> on = ttfts_of(rs, true), off = ttfts_of(rs, false);
  if (on.empty() || off.empty()) return;
  std::vector<double> saved;
  for (size_t i = 0; i < std::min(on.size(), off.size()); ++i) saved.push_back(off[i] - on[i]);
  fmt::print(
      "  TTFT restored, the rest of the prompt computed while later layers are read {:7.3f} s\n"
      "    every page read before the request runs {:7.3f} s  (medians of {}; the overlap "
      "saves {:.1f} ms, median of the pairs)\n",
      median(on), median(off), on.size(), median(saved) * 1e3);
}

// Returns the median restore rate (MB/s) of the rounds it prints.
double print_rounds(const std::vector<Round>& all, double cold, int threads) {
  std::vector<Round> rs;  // the restores measured: the overlapped ones when there are
  for (const Round& r : all)
    if (r.overlapped == all.front().overlapped) rs.push_back(r);
  const Round& a = rs.front();
  std::vector<double> ttfts, rates;
  for (const Round& r : rs) ttfts.push_back(r.ttft_s), rates.push_back(r.mb_per_s());
  fmt::print("  restart: index of {} page files in {:.1f} ms\n", a.files, a.restart_s * 1e3);
  fmt::print("  TTFT cold prefill      {:9.3f} s\n", cold);
  fmt::print(
      "  TTFT restored from SSD {:9.3f} s  median of {} restarts ({:.1f}x faster than "
      "recomputing)\n",
      median(ttfts), rs.size(), cold / median(ttfts));
  fmt::print("  TTFT from the RAM tier {:9.3f} s  (the last page computed, no restore)\n",
             a.ram_ttft_s);
  print_overlap(all);
  fmt::print(
      "  restore{}: {} pages, {:.1f} MB; {:.0f} MB/s median ({:.0f}–{:.0f}), {} reads in "
      "flight; engine-thread copies into the pool {:.3f} s of the first {:.3f} s\n",
      a.overlapped ? " (overlapped)" : "", a.pages, static_cast<double>(a.bytes) / 1e6,
      median(rates), *std::min_element(rates.begin(), rates.end()),
      *std::max_element(rates.begin(), rates.end()), threads, a.copy_s, a.restore_s);
  return median(rates);
}

}  // namespace

void run_restore_bench(Model& model, const EngineOptions& base, const RestoreBenchFlags& f) {
  namespace fs = std::filesystem;
  const ModelConfig& cfg = model.config();
  const int64_t n = std::min<int64_t>(f.prompt_tokens, cfg.max_position_embeddings - 1);
  const std::vector<int32_t> prompt = random_prompt(n, cfg.vocab_size);
  fs::remove_all(f.dir);
  fs::create_directories(f.dir);
  EngineOptions o = base;
  o.ssd_cache_dir = f.dir;
  o.restore_threads = f.restore_threads;
  o.restore_layer_ranges = f.layer_ranges;
  o.prefix_cache_bytes = std::max<int64_t>(o.prefix_cache_bytes, int64_t{1} << 30);
  o.kv_budget_bytes = std::max(o.kv_budget_bytes, 2 * o.prefix_cache_bytes);
  fmt::print(
      "ssd restore: {} tokens, KV pages spilled to {} at shutdown, restored after "
      "restarts\n",
      n, f.dir);
  double cold = 0;
  {
    Engine e(model, nullptr, o);
    cold = first_token_seconds(e, prompt);
    const CacheFlush fl = e.close(std::chrono::seconds(300));
    if (!fl.durable) fmt::print("  flush at shutdown not durable: {}\n", fl.error);
  }
  // Restores and the disk's own reads alternate, so both see the same machine;
  // overlapped and waiting restores alternate too.
  std::vector<Round> rounds;
  std::vector<double> same, best;
  for (int i = 0; i < 6; ++i) {
    EngineOptions oi = o;
    oi.restore_overlap = o.restore_overlap && i % 2 == 0;
    rounds.push_back(restore_round(model, oi, prompt, i == 0));
    if (i % 2 == 1) continue;
    const int64_t file = rounds.back().pages > 0 ? rounds.back().bytes / rounds.back().pages : 4096;
    const DiskReadFigures d = measure_disk_reads(
        f.dir, std::max<int64_t>(rounds.back().bytes, int64_t{64} << 20), file, f.restore_threads);
    same.push_back(d.same_mb_s);
    best.push_back(d.best());
  }
  const double rate = print_rounds(rounds, cold, f.restore_threads);
  const Round& a = rounds.front();
  const int64_t file = a.pages > 0 ? a.bytes / a.pages : 4096;
  const double top = *std::max_element(best.begin(), best.end());
  fmt::print(
      "  disk O_DIRECT: {:.0f} MB/s median ({} KiB requests, {} in flight); best of every "
      "way measured {:.0f} MB/s\n",
      median(same), (file + 4095) / 4096 * 4, f.restore_threads, top);
  if (top > 0)
    fmt::print("  restore / disk: {:.0f}% of the same-shaped reads, {:.0f}% of the best\n",
               100.0 * rate / median(same), 100.0 * rate / top);
}

}  // namespace cairn
