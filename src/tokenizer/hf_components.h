// Builders for the tokenizer.json sections: normalizer, pre_tokenizer,
// post_processor and decoder. An unknown "type" is an Error naming the type
// and its JSON path.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/hf_json.h"
#include "tokenizer/parts.h"

namespace cairn::tok {

std::unique_ptr<Normalizer> build_normalizer(const JsonNode& node);  // null for JSON null
// Sets byte_level when a ByteLevel pre-tokenizer appears (the model then starts from bytes).
std::unique_ptr<PreTokenizer> build_pre_tokenizer(const JsonNode& node, bool& byte_level);
std::unique_ptr<PostProcessor> build_post_processor(const JsonNode& node, const Vocab& vocab);

// The decoder chain, reduced to what each token decodes to on its own plus the
// whole-output rules (see DecodeTable).
struct DecoderSteps {
  struct Step {
    enum class Kind { kReplace, kByteFallback, kByteLevel, kStrip } kind;
    std::string from, to;  // kReplace; kStrip strips `from` chars
    int64_t start = 0, stop = 0;
  };
  std::vector<Step> per_token;
  bool strip_leading_space = false;
};
void build_decoder(const JsonNode& node, DecoderSteps& steps);
// What one piece decodes to under the per-token steps.
std::string apply_decoder(const DecoderSteps& steps, const std::string& piece);

}  // namespace cairn::tok
