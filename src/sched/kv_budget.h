// What the scheduler may ask of KV memory while it plans, without mutating
// anything (DESIGN.md decision 9). PagedKvBudget answers from the real paged
// state and prefix cache; the scheduler's tests use it over a model-free config.
#pragma once

#include <cstdint>
#include <span>

#include "kv/paged_kv.h"
#include "prefix/page_key.h"
#include "prefix/prefix_cache.h"
#include "sched/sequence.h"

namespace cairn {

class KvBudget {
 public:
  virtual ~KvBudget() = default;
  // Bytes the pool can hand out now: free, plus what evicting unreferenced
  // prefix-cache pages would free.
  virtual int64_t available_bytes() const = 0;
  // Bytes appending n positions to running seq's slot would take.
  virtual int64_t append_bytes(const Sequence& seq, int64_t n) const = 0;
  // Bytes a fresh sequence of n positions would take.
  virtual int64_t fresh_bytes(int64_t n) const = 0;
  // Bytes freeing seq's slot would give back (pages only it references).
  virtual int64_t held_bytes(const Sequence& seq) const = 0;
  // Prompt positions seq would take from the prefix cache if admitted now.
  virtual int64_t cached_tokens(const Sequence& seq) const = 0;
  // Positions a prefill chunk must not cross (bf16-first conversion: the chunk
  // reaching it ends there so that chunking never changes what is read); 0: none.
  virtual int64_t chunk_boundary() const = 0;
};

// The engine's budget: its PagedKvState and (optional) PrefixCache.
class PagedKvBudget final : public KvBudget {
 public:
  // cache may be null (no prefix cache). ns_full, ns_quant: the namespaces the
  // engine publishes under for unquantized and quantized pages.
  PagedKvBudget(const PagedKvState& kv, const PrefixCache* cache, PageKey ns_full,
                PageKey ns_quant);

  int64_t available_bytes() const override;
  int64_t append_bytes(const Sequence& seq, int64_t n) const override;
  int64_t fresh_bytes(int64_t n) const override;
  int64_t held_bytes(const Sequence& seq) const override;
  int64_t cached_tokens(const Sequence& seq) const override;
  int64_t chunk_boundary() const override;

  // The match admission would attach (the longest of the quantized and the
  // unquantized namespace that is usable), capped at the prompt's last token.
  PrefixMatch match(const Sequence& seq) const;

 private:
  const PagedKvState& kv_;
  const PrefixCache* cache_;
  PageKey ns_full_, ns_quant_;
};

}  // namespace cairn
