// The key of a generation checkpoint: a hash of the canonical request, so that
// an identical request after a crash or restart finds it and nothing else
// does. Canonical: the prompt ids, max_tokens, every sampling and processor
// parameter, the stop ids and strings, logprobs, skip_special, the seed or
// "server-chosen", the model fingerprint and the KV scheme, each written in a
// fixed order with its length (docs/checkpoints.md).
#pragma once

#include <string_view>

#include "kv/page_meta.h"
#include "sched/request.h"

namespace cairn {

// seed_chosen: the seed was chosen for the caller (r.seed is then ignored).
PageKey checkpoint_key(const Request& r, bool seed_chosen, std::string_view model_fingerprint,
                       std::string_view kv_scheme);

}  // namespace cairn
