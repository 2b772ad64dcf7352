// Generation checkpoint files: where a running generation stands, so that an
// identical request after a crash or restart resumes it (DESIGN.md §3). A file
// holds the canonical request's key, the prompt and every emitted token (the
// last one sampled but not yet computed: the pending token), the seed used and
// the sampler's step, the logprobs already reported, and the keys of the full
// KV pages on disk (page files of the prefix tier or of the checkpoint page
// tier). It describes itself like a page file: magic, format version,
// namespace (fingerprint, scheme, tag), header and file checksums. Byte layout:
// docs/checkpoints.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "prefix/page_file.h"

namespace cairn {

// Which tier's page file holds a checkpointed page.
enum class PageSource : uint8_t {
  kPrefix = 0,      // the SSD prefix tier (a page of prompt tokens only)
  kCheckpoint = 1,  // the checkpoint page tier (a page holding emitted tokens)
};

struct CheckpointPage {
  PageSource source = PageSource::kPrefix;
  PageKey key;  // the page's key in that tier's namespace
};

struct SavedLogprob {
  int32_t id = 0;
  float logprob = 0.0f;
};

struct Checkpoint {
  PageKey key;  // the canonical request's key (checkpoint_key)
  uint64_t seed = 0;
  bool seed_chosen = false;  // the server chose the seed: resuming uses this one
  int64_t n_prompt = 0;
  // [n_prompt + step]: the prompt, then every emitted token; the last is the
  // pending token (sampled and reported, its K/V not yet computed).
  std::vector<int32_t> tokens;
  int64_t page_tokens = 0;
  bool quantized = false;             // the pages are in the scheme's quantized formats
  std::vector<CheckpointPage> pages;  // the first full pages of tokens, first first
  bool has_logprobs = false;
  std::vector<float> logprobs;                 // [step] of each emitted token
  std::vector<std::vector<SavedLogprob>> top;  // [step][n_top] best first

  int64_t step() const { return static_cast<int64_t>(tokens.size()) - n_prompt; }
};

constexpr uint32_t kCheckpointFileVersion = 1;
constexpr const char* kCheckpointTag = "generation";

// The whole file of c in namespace ns (tag kCheckpointTag). Replaces out's contents.
void encode_checkpoint_file(const Checkpoint& c, const TierNamespace& ns,
                            std::vector<uint8_t>& out);

// Parses and checks a whole file: magic, version, header checksum, sizes, file
// checksum, namespace (key and strings) against expect_ns, its key against
// expect_key (empty: any), then what the fields must say of each other. Errors
// reuse the page files' reasons (PageFileError).
PageFileCheck decode_checkpoint_file(std::span<const uint8_t> file, const PageKey& expect_ns,
                                     const PageKey& expect_key, Checkpoint& out);

}  // namespace cairn
