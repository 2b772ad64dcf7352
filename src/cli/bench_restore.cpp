#include "cli/bench_restore.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "model/config.h"
#include "prefix/disk_bandwidth.h"

namespace cairn {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Submits the prompt for one token; seconds until that token arrives.
double ttft(Engine& e, const std::vector<int32_t>& prompt) {
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

std::vector<int32_t> random_prompt(int64_t n, int64_t vocab) {
  std::vector<int32_t> p;
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (int64_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    p.push_back(static_cast<int32_t>(3 + x % static_cast<uint64_t>(vocab - 3)));
  }
  return p;
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
  o.prefix_cache_bytes = std::max<int64_t>(o.prefix_cache_bytes, int64_t{1} << 30);
  o.kv_budget_bytes = std::max(o.kv_budget_bytes, 2 * o.prefix_cache_bytes);
  fmt::print(
      "ssd restore: {} tokens, KV pages spilled to {} at shutdown, restored after a restart\n", n,
      f.dir);
  double cold = 0;
  {
    Engine e(model, nullptr, o);
    cold = ttft(e, prompt);
    const CacheFlush fl = e.close(std::chrono::seconds(300));
    if (!fl.durable) fmt::print("  flush at shutdown not durable: {}\n", fl.error);
  }
  auto t0 = Clock::now();
  Engine e(model, nullptr, o);  // restart: the index is rebuilt from the files
  const double restart = since(t0);
  const EngineStats before = e.stats();
  ttft(e, random_prompt(64, cfg.vocab_size / 2));  // first-request costs, not the restore's
  const double restored = ttft(e, prompt);
  const double ram = ttft(e, prompt);  // the same prefix, now in the RAM tier
  const EngineStats st = e.stats();
  const double mb = static_cast<double>(st.ssd_restore_bytes) / 1e6;
  const int64_t pages = st.ssd_restored_pages - before.ssd_restored_pages;
  // From the restore's start until its request was queued: reads, checks and
  // the copies into pool pages (the TTFT difference says the same, noisier).
  const double restore_s = std::max(st.ssd_restore_wall_seconds, 1e-9);
  fmt::print("  restart: index of {} page files ({:.1f} MB) in {:.1f} ms\n", before.ssd_files,
             static_cast<double>(before.ssd_bytes) / 1e6, restart * 1e3);
  fmt::print("  TTFT cold prefill      {:9.3f} s\n", cold);
  fmt::print("  TTFT restored from SSD {:9.3f} s  ({:.1f}x faster than recomputing)\n", restored,
             cold / restored);
  fmt::print("  TTFT from the RAM tier {:9.3f} s  (the last page computed, no restore)\n", ram);
  fmt::print(
      "  restore: {} pages, {:.1f} MB in {:.3f} s = {:.0f} MB/s ({} reads in flight; TTFT "
      "difference {:.3f} s)\n",
      pages, mb, restore_s, mb / restore_s, f.restore_threads, restored - ram);
  fmt::print(
      "  of which {:.3f} s copying into new pool pages on the engine thread ({:.0f} MB/s: "
      "first touches of fresh memory)\n",
      st.ssd_restore_copy_seconds, mb / std::max(st.ssd_restore_copy_seconds, 1e-9));
  const int64_t file_bytes = pages > 0 ? st.ssd_restore_bytes / pages : 4096;
  const DiskReadFigures disk =
      measure_disk_reads(f.dir, std::max<int64_t>(st.ssd_restore_bytes, int64_t{64} << 20),
                         file_bytes, f.restore_threads);
  fmt::print(
      "  disk O_DIRECT: {:.0f} MB/s ({} KiB requests, {} in flight), {:.0f} MB/s (8 MiB, 1),"
      " {:.0f} MB/s (8 MiB, {})\n",
      disk.same_mb_s, (file_bytes + 4095) / 4096 * 4, f.restore_threads, disk.seq_mb_s,
      disk.wide_mb_s, f.restore_threads);
  if (disk.best() > 0)
    fmt::print("  restore / disk: {:.0f}% of the same-shaped reads, {:.0f}% of the best\n",
               100.0 * mb / restore_s / disk.same_mb_s, 100.0 * mb / restore_s / disk.best());
}

}  // namespace cairn
