#include "sched/kv_budget.h"

#include <algorithm>

namespace cairn {

PagedKvBudget::PagedKvBudget(const PagedKvState& kv, const PrefixCache* cache, PageKey ns_full,
                             PageKey ns_quant)
    : kv_(kv), cache_(cache), ns_full_(ns_full), ns_quant_(ns_quant) {}

int64_t PagedKvBudget::available_bytes() const {
  const int64_t evictable = cache_ != nullptr ? cache_->stats().evictable_bytes : 0;
  return kv_.pool().free_bytes() + evictable;
}

int64_t PagedKvBudget::append_bytes(const Sequence& seq, int64_t n) const {
  return kv_.bytes_to_append(seq.slot, n);
}

int64_t PagedKvBudget::fresh_bytes(int64_t n) const {
  // An unused slot: what a new sequence's first n positions take.
  return kv_.bytes_to_append(-1, n);
}

int64_t PagedKvBudget::held_bytes(const Sequence& seq) const {
  if (seq.slot < 0) return 0;
  int64_t bytes = 0;
  for (int g = 0; g < static_cast<int>(kv_.groups().size()); ++g) {
    const int32_t a = kv_.arena_of(seq.slot, g);
    for (int32_t id : kv_.page_ids(seq.slot, g))
      if (id >= 0 && kv_.pool().ref_count(a, id) == 1) bytes += kv_.pool().page_bytes(a);
  }
  return bytes;
}

PrefixMatch PagedKvBudget::match(const Sequence& seq) const {
  if (cache_ == nullptr) return {};
  // The last prompt token is always computed: its logits start the generation.
  const int64_t max_tokens = static_cast<int64_t>(seq.tokens.size()) - 1;
  std::span<const int32_t> ids(seq.tokens);
  PrefixMatch best = cache_->match(ids, ns_full_, max_tokens);
  if (ns_quant_ != ns_full_) {
    PrefixMatch q = cache_->match(ids, ns_quant_, max_tokens);
    if (q.n_tokens > best.n_tokens) best = std::move(q);
  }
  return best;
}

int64_t PagedKvBudget::cached_tokens(const Sequence& seq) const {
  return match(seq).n_tokens;
}

int64_t PagedKvBudget::chunk_boundary() const {
  const KvQuantScheme& q = kv_.quant_scheme();
  return q.enabled() ? std::max<int64_t>(q.quant_start, 1) : 0;
}

}  // namespace cairn
