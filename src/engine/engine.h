// The serving engine: continuous batching over one model and one paged KV
// state. Any thread may submit() and cancel(); one engine thread owns the
// model, the KV state and the prefix cache (DESIGN.md decision 8). Each step is
// one ragged batch of decode tokens and prefill chunks (sched/scheduler.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "engine/kv_settings.h"
#include "engine/request_stream.h"
#include "model/model.h"
#include "sched/request.h"

namespace cairn {

namespace tok {
class Tokenizer;
}

struct EngineOptions {
  int64_t max_batch_tokens = 2048;  // tokens per step (decode rows + prefill chunks)
  int32_t max_seqs = 64;            // running sequences at most
  int32_t max_queue = 1024;         // waiting requests at most; more → Error(kQueueFull)
  int64_t kv_budget_bytes = int64_t{1} << 30;       // KV page memory (pool budget)
  int64_t prefix_cache_bytes = int64_t{256} << 20;  // RAM prefix tier; 0 turns it off
  // Host-RAM tier between the pool's prefix tier and the SSD tier (docs/kv.md,
  // "Tiers"): records of evicted pages in host memory, page-locked on a GPU.
  // 0 = off; on the CPU the pool is host memory already (the tier then keeps copies).
  int64_t host_cache_bytes = 0;
  KvSettings kv;
  // SSD tier of the prefix cache (docs/durability.md): pages evicted from RAM
  // are written under this folder and restored from it, across restarts. "" = off.
  std::string ssd_cache_dir;
  int64_t ssd_cache_max_bytes = int64_t{16} << 30;
  int64_t spill_queue_bytes = int64_t{256} << 20;  // write-behind cap
  int32_t restore_threads = 4;                     // SSD reads in flight
  // Restores overlapped with the rest of the prompt: the request runs once every
  // page's first layers are in, its forward waiting layer by layer for the rest
  // (docs/durability.md). false: it is queued once all are in.
  bool restore_overlap = true;
  // The layer ranges a layer-wise restore reads in turn; 0: as many as keep a
  // read of one page's range at ~192 KiB or more (1 to 4).
  int32_t restore_layer_ranges = 0;
  // Host pools too read a layer-wise restore's parts into staging slots and
  // copy them into the pages, as a GPU's pool must (tests of that path).
  bool stage_restores = false;
  // Tests: a layer-wise restore reads each page's last layer range this many milliseconds
  // late, so that its request surely runs before that range settles (the cut-back path).
  int32_t restore_last_range_hold_ms = 0;
  // Generation checkpoints (needs ssd_cache_dir): every N emitted tokens a
  // running generation's state goes to disk, and an identical request after a
  // crash or restart resumes it (docs/checkpoints.md). 0 = off.
  int32_t generation_checkpoint_tokens = 0;
  // Names the weights, config and tokenizer: folded into prefix-cache keys so
  // two models never share pages (registry: model_fingerprint()).
  std::string model_fingerprint;
  // Called on the engine thread with each row of logits a request samples from,
  // before any processor (tests of determinism compare them bit for bit).
  std::function<void(uint64_t request_id, std::span<const float> logits)> logits_observer;
};

// A snapshot for /metrics and the load benchmark; counters only grow.
struct EngineStats {
  int64_t n_waiting = 0, n_running = 0;
  int64_t kv_pages_used = 0, kv_bytes_used = 0, kv_bytes_budget = 0;
  int64_t prefix_cache_bytes = 0, prefix_cache_pages = 0;
  // Host-RAM tier (zero without --host-cache-bytes).
  int64_t host_cache_bytes = 0, host_cache_pages = 0, host_cache_memory_bytes = 0;
  int64_t host_cache_evictions = 0;  // records that went on to the SSD tier (or were dropped)
  int64_t host_restored_pages = 0, host_restore_bytes = 0;
  int64_t host_restore_evicted_bytes = 0;  // other pages evicted into the tier to make room
  double host_restore_seconds = 0;         // copies back and those evictions, engine thread
  int64_t host_write_bytes = 0;            // evicted pages moved into the tier
  double host_write_seconds = 0;           // reading them off the device and keeping them
  int64_t requests_submitted = 0, requests_finished = 0, requests_rejected = 0;
  int64_t prompt_tokens = 0, generated_tokens = 0;
  int64_t prefix_queries = 0, prefix_hits = 0, prefix_hit_tokens = 0;
  int64_t preemptions = 0, steps = 0;
  // SSD tier and spill queue (zero without --ssd-cache).
  int64_t ssd_files = 0, ssd_bytes = 0, ssd_corrupt = 0;
  int64_t ssd_restored_pages = 0, ssd_restore_bytes = 0;
  double ssd_restore_seconds = 0;  // read and verify, summed over reads
  // From a restore's start until its request was queued (a layer-wise one:
  // until its last part was read and checked, the request running meanwhile).
  double ssd_restore_wall_seconds = 0;
  // Of that, the engine thread's part: copying pages into the pool (layer-wise:
  // the readers copy, the engine thread only enters the pages in the RAM tier).
  double ssd_restore_copy_seconds = 0;
  // Sequences cut back after their forward because a page they attended, still
  // arriving, failed its check (they computed those positions again).
  int64_t ssd_restore_cut_backs = 0;
  int64_t spill_pending_items = 0, spill_pending_bytes = 0;
  int64_t spill_written = 0, spill_dropped = 0, spill_failed = 0;
  // Generation checkpoints (zero without --generation-checkpoint).
  int64_t checkpoint_files = 0;
  int64_t checkpoints_written = 0;  // checkpoint files written durably
  int64_t checkpoints_resumed = 0;  // requests that resumed one
  int64_t checkpoints_failed = 0;   // writes or removals that failed
  int64_t checkpoints_corrupt = 0;  // files that failed a check: missed and removed
};

// What flush_cache found: everything enqueued before the call is on disk, or why not.
struct CacheFlush {
  bool durable = false;
  bool timed_out = false;
  int64_t pending_items = 0, pending_bytes = 0, dropped = 0, failed = 0;
  std::string error;
};

class Engine {
 public:
  // tokenizer may be null: events then carry ids but no text, and stop strings
  // are refused. Starts the engine thread.
  Engine(Model& model, const tok::Tokenizer* tokenizer, EngineOptions options);
  ~Engine();  // cancels everything in flight, then joins the engine thread
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates and queues. Throws Error: kInvalidArgument (naming the field),
  // kContextLength, kQueueFull when max_queue requests wait, kUnavailable after
  // stop_admitting(). Nothing else is disturbed by a refused request.
  std::shared_ptr<RequestStream> submit(Request request);
  // Cancels a queued or running request; its pages are freed at the next step
  // and its stream ends with kCancelled. Unknown or finished ids are ignored.
  void cancel(uint64_t request_id);
  void cancel_all();
  // After this, submit throws kUnavailable; requests in flight go on.
  void stop_admitting();
  // Requests queued or running.
  int64_t n_in_flight() const;
  EngineStats stats() const;
  // Waits up to timeout until every page spilled so far is durable on the SSD
  // tier. Not durable (with the reason) when there is no SSD tier.
  CacheFlush flush_cache(std::chrono::milliseconds timeout);
  // Shutdown: cancels what is in flight (their checkpoints stay), stops the
  // engine thread, spills every cached page to the SSD tier and waits up to
  // timeout for the write-behind queues. What did not make it is reported.
  // Later calls, and the destructor (which closes with 60 s), do nothing more.
  CacheFlush close(std::chrono::milliseconds timeout);
  const EngineOptions& options() const { return options_; }
  const ModelConfig& model_config() const;

 private:
  class Loop;
  EngineOptions options_;
  std::unique_ptr<Loop> loop_;
};

}  // namespace cairn
