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
#include "model/tp/sharded_kv.h"
#include "prefix/checkpoint_store.h"
#include "prefix/host_tier.h"
#include "prefix/layered_restore.h"
#include "prefix/prefix_cache.h"
#include "prefix/slot_memory.h"
#include "prefix/spill_queue.h"
#include "prefix/ssd_restorer.h"
#include "prefix/ssd_tier.h"
#include "sched/kv_budget.h"
#include "sched/scheduler.h"

namespace cairn {

struct CheckpointJob;  // engine_checkpoint.cpp

// A submitted request on the engine thread.
struct ActiveRequest {
  Sequence seq;
  std::shared_ptr<RequestStream> stream;
  std::unique_ptr<SeqOutput> output;
  PublishCursor cursor;     // prefix-cache publishing of its full pages
  bool quantized = false;   // the namespace its pages publish under
  int32_t stop_index = -1;  // the stop string that ended it
  bool finished = false;    // finish() ran (its final event may wait on a checkpoint removal)
  // Generation checkpoints (engine_checkpoint.cpp); ckpt_key empty: off.
  PageKey ckpt_key;
  bool ckpt_on_disk = false;  // the key may have checkpoints on disk: its end removes them
  std::shared_ptr<const Checkpoint> resume;  // the checkpoint it resumes, until restored
  std::vector<CheckpointPage> ckpt_pages;    // full pages its checkpoints listed, first first
  bool ckpt_quantized = false;               // their format
  int64_t ckpt_step = 0;                     // the step of its newest checkpoint
  std::shared_ptr<CheckpointJob> last_job;   // its newest, maybe not yet started
  std::vector<float> logprobs;               // [n_generated] when checkpointing
  std::vector<std::vector<SavedLogprob>> top;
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
  CacheFlush close(std::chrono::milliseconds timeout);
  const ModelConfig& config() const { return model_.config(); }

 private:
  void run();
  bool take_inbox();  // false when stopping with nothing left
  void step();
  void apply_plan(const StepPlan& plan);
  void attach_prefix(ActiveRequest& a, const Admission& adm);
  void forward_and_sample(const StepPlan& plan);
  // Sampling (engine_sample.cpp): one host row, or every row on the model's device.
  void sample_row(ActiveRequest& a, std::span<const float> logits);
  void sample_on_device(const std::vector<ActiveRequest*>& rows, Tensor& logits);
  void observe(const std::vector<ActiveRequest*>& rows, const Tensor& logits);
  void take_token(ActiveRequest& a, const SampleResult& sr);
  void publish(ActiveRequest& a);
  void finish(ActiveRequest& a, FinishReason why, std::string error = {});
  void fail_running(const std::string& error);
  void reap();  // erases finished requests from active_
  void update_stats();
  KvView& kv_view() { return sharded_ ? static_cast<KvView&>(*sharded_) : kv_; }
  // SSD tier (engine_tiers.cpp).
  struct Tier {
    std::unique_ptr<SsdTier> ssd;
    std::unique_ptr<SsdTier> ckpt_pages;  // pages holding emitted tokens (checkpoints only)
    std::unique_ptr<SsdRestorer> restorer;
    PageKey ns;
  };
  // A chain of SSD pages read layer-wise into the pool (engine_layered.cpp):
  // the request is queued once every page's header and first layers are in,
  // its pages entering the RAM tier pending, or once all are in.
  struct Restore {
    uint64_t id = 0;
    Tier* tier = nullptr;
    // A checkpoint's pages: their keys in the RAM tier's namespace (pages from
    // first_page on); their headers must hold the request's tokens there.
    std::vector<PageKey> rekey;
    int64_t first_page = 0;  // the chain's first page in the sequence
    PageKey parent;          // of the first page
    std::chrono::steady_clock::time_point started;
    // [pages][n_groups] pool pages allocated when the reads start, which the
    // readers write (the restore's references).
    std::vector<std::vector<int32_t>> spare;
    std::shared_ptr<LayeredRestore> layered;
    bool overlap = false;  // queued once the first layers are in, else once all are
    bool queued = false;   // the request went to the scheduler (or was cancelled)
    size_t inserted = 0;   // pages inserted pending
  };
  void open_tiers(const std::string& scheme);
  // Host-RAM tier (engine_host_tier.cpp).
  void open_host_tier();
  void route_evictions();
  // Copies a new request's prefix held in host memory past the pool's back into
  // the pool (before SSD restores, which continue from there).
  void restore_from_host(ActiveRequest& a);
  void fill_host_stats(EngineStats& s) const;
  double host_write_seconds() const;
  CacheFlush close_tiers(std::chrono::milliseconds timeout);
  Tier* tier_for(const PageKey& ns);
  // Starts restoring a new request's prefix past what RAM holds; false when
  // there is nothing to restore (the caller queues it at once).
  bool begin_restore(ActiveRequest& a);
  void poll_restores();  // queues the requests whose restores settled
  // Layer-wise restores (engine_layered.cpp): whether restored pages are read
  // into the pool through staging slots, whether a chain of tier t ending at
  // end_tokens may overlap the prompt, then the restore.
  bool restores_staged() const;
  std::shared_ptr<PartSink> restore_sink(const Restore& r);
  int64_t restore_page_bytes(bool quantized) const;
  bool overlaps(const Tier& t, int64_t end_tokens) const;
  // tiers: each page's (a checkpoint's come from two); empty: r.tier's.
  void begin_layered(Restore& r, std::vector<PageKey> keys, int64_t first_page,
                     std::vector<SsdTier*> tiers = {});
  bool allocate_layered(Restore& r, std::vector<PageKey>& keys);
  LayeredPlan layered_plan(const Restore& r, std::vector<PageKey> keys, int64_t first_page);
  bool poll_layered(Restore& r);  // true once it is over
  void queue_layered(Restore& r, ActiveRequest& a);
  // After a forward: sequences whose attached pages failed a check past where
  // they computed are cut back to the failure; returns them (they sample nothing).
  std::vector<const Sequence*> cut_back_failed(const StepPlan& plan);
  void cut_back(ActiveRequest& a, int64_t position);
  std::function<void()> restore_waker();  // a restore settling wakes this thread
  bool quantized_tier(const Tier& t) const { return t.ns == ns_quant_ && ns_quant_ != ns_full_; }
  void release_spare(Restore& r);
  void release_spare_page(Restore& r, size_t i);
  bool holds_tokens_of(const Restore& r, size_t i, const ActiveRequest& a,
                       const PageFileHeader& h) const;
  PageKey cache_key(const Restore& r, size_t i) const;
  void fill_tier_stats(EngineStats& s) const;
  // Generation checkpoints (engine_checkpoint.cpp).
  void open_checkpoints();
  // Caller's thread, at submit: the checkpoint an identical request left, when
  // it fits r (its seed, prompt and limits); disk I/O, never on the engine thread.
  std::shared_ptr<const Checkpoint> find_checkpoint(ActiveRequest& a, const Request& r);
  // Feeds a resumed request's saved tokens to its output; the event that replays them.
  Event replay(ActiveRequest& a) const;
  void note_sampled(ActiveRequest& a, const SampleResult& sr);
  void checkpoint(ActiveRequest& a);
  void list_pages(ActiveRequest& a, const PageKey& ns, CheckpointJob& job);
  std::vector<PageKey> chain_keys(const ActiveRequest& a, const PageKey& ns, int64_t n) const;
  bool begin_resume_restore(ActiveRequest& a);
  // Pushes a's final event, after a durable removal of its key's checkpoints
  // when it finished (so no finished answer is ever resumed).
  void deliver_final(ActiveRequest& a, Event e);
  ActiveRequest& active(const Sequence* s);

  Model& model_;
  const tok::Tokenizer* tokenizer_;
  EngineOptions options_;
  PagedKvState kv_;  // one shard per tensor-parallel rank (sizes are one shard's)
  std::unique_ptr<tp::ShardedKvView> sharded_;  // kv_'s shards, when more than one
  std::unique_ptr<PrefixCache> cache_;
  PageKey ns_full_, ns_quant_;
  PagedKvBudget budget_;
  Scheduler sched_;
  std::unordered_map<uint64_t, std::unique_ptr<ActiveRequest>> active_;  // engine thread only
  std::unique_ptr<HostTier> host_;  // between the pool and the SSD tier; null: off
  double host_put_seconds_ = 0;     // in its evict observer (host_write_seconds)
  std::vector<Tier> tiers_;         // full, then quantized
  std::unique_ptr<SpillQueue> spill_;
  std::string scheme_;  // the KV scheme's name (namespaces, checkpoint keys)
  std::unique_ptr<CheckpointStore> ckpt_store_;
  std::unique_ptr<SpillQueue> ckpt_queue_;  // checkpoint writes and removals, in order
  BufferPool ckpt_copies_{int64_t{64} << 20};
  bool closed_ = false;
  std::vector<Restore> restoring_;
  std::shared_ptr<SlotMemory> staging_;  // staged restores' slots, made on the first
  std::vector<float> row_;               // [vocab] scratch
  EngineStats counts_;  // engine-thread counters, copied into stats_ by update_stats()

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<ActiveRequest>> inbox_;
  std::vector<uint64_t> cancels_;
  bool cancel_everything_ = false, stopping_ = false, admitting_ = true;
  bool restore_settled_ = false;  // a restore page settled since the thread last looked
  uint64_t next_id_ = 1;
  int64_t n_in_flight_ = 0;  // inbox + active
  int64_t n_waiting_ = 0;    // inbox + the scheduler's queue
  EngineStats stats_;
  std::thread thread_;
};

}  // namespace cairn
