// The engine thread and what it owns (private to src/engine/). Other threads
// only touch the inbox, the cancel list and the stats snapshot, under mu_.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"
#include "engine/seq_output.h"
#include "kv/paged_kv.h"
#include "prefix/prefix_cache.h"
#include "prefix/spill_queue.h"
#include "prefix/ssd_restorer.h"
#include "prefix/ssd_tier.h"
#include "sched/kv_budget.h"
#include "sched/scheduler.h"

namespace cairn {

// A submitted request on the engine thread.
struct ActiveRequest {
  Sequence seq;
  std::shared_ptr<RequestStream> stream;
  std::unique_ptr<SeqOutput> output;
  PublishCursor cursor;     // prefix-cache publishing of its full pages
  bool quantized = false;   // the namespace its pages publish under
  int32_t stop_index = -1;  // the stop string that ended it
};

class Engine::Loop {
 public:
  Loop(Model& model, const tok::Tokenizer* tokenizer, const EngineOptions& options);
  ~Loop();

  std::shared_ptr<RequestStream> submit(Request request);
  void cancel(uint64_t id);
  void cancel_all();
  void stop_admitting();
  int64_t n_in_flight() const;
  EngineStats stats() const;
  CacheFlush flush_cache(std::chrono::milliseconds timeout);
  const ModelConfig& config() const { return model_.config(); }

 private:
  void run();
  bool take_inbox();  // false when stopping with nothing left
  void step();
  void apply_plan(const StepPlan& plan);
  void attach_prefix(ActiveRequest& a, const Admission& adm);
  void forward_and_sample(const StepPlan& plan);
  void sample_row(ActiveRequest& a, std::span<const float> logits);
  void publish(ActiveRequest& a);
  void finish(ActiveRequest& a, FinishReason why, std::string error = {});
  void fail_running(const std::string& error);
  void reap();  // erases finished requests from active_
  void update_stats();
  // SSD tier (engine_tiers.cpp).
  struct Tier {
    std::unique_ptr<SsdTier> ssd;
    std::unique_ptr<SsdRestorer> restorer;
    PageKey ns;
  };
  struct Restore {
    uint64_t id = 0;
    Tier* tier = nullptr;
    std::shared_ptr<RestoreHandle> handle;
  };
  void open_tiers(const std::string& scheme);
  void close_tiers();
  Tier* tier_for(const PageKey& ns);
  // Starts restoring a new request's prefix past what RAM holds; false when
  // there is nothing to restore (the caller queues it at once).
  bool begin_restore(ActiveRequest& a);
  void poll_restores();  // queues the requests whose restores settled
  void fill_tier_stats(EngineStats& s) const;
  ActiveRequest& active(const Sequence* s);

  Model& model_;
  const tok::Tokenizer* tokenizer_;
  EngineOptions options_;
  PagedKvState kv_;
  std::unique_ptr<PrefixCache> cache_;
  PageKey ns_full_, ns_quant_;
  PagedKvBudget budget_;
  Scheduler sched_;
  std::unordered_map<uint64_t, std::unique_ptr<ActiveRequest>> active_;  // engine thread only
  std::vector<Tier> tiers_;                                              // full, then quantized
  std::unique_ptr<SpillQueue> spill_;
  std::vector<Restore> restoring_;
  std::vector<float> row_;  // [vocab] scratch
  EngineStats counts_;      // engine-thread counters, copied into stats_ by update_stats()

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<ActiveRequest>> inbox_;
  std::vector<uint64_t> cancels_;
  bool cancel_everything_ = false, stopping_ = false, admitting_ = true;
  uint64_t next_id_ = 1;
  int64_t n_in_flight_ = 0;  // inbox + active
  int64_t n_waiting_ = 0;    // inbox + the scheduler's queue
  EngineStats stats_;
  std::thread thread_;
};

}  // namespace cairn
