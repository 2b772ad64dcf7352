// StreamingDetokenizer: decode's bytes arrive token by token; UTF-8 repair runs
// on them as they come, holding back only a trailing incomplete character. The
// repair is a left-to-right decision per byte, so the stream equals one-shot decode.
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace cairn::tok {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special)
    : tokenizer_(&tokenizer), skip_special_(skip_special) {
  reset();
}

void StreamingDetokenizer::reset() {
  strip_pending_ = tokenizer_->strips_leading_space();
  pending_.clear();
}

std::string StreamingDetokenizer::feed(int32_t id) {
  const size_t before = pending_.size();
  tokenizer_->append_token_bytes(id, skip_special_, pending_);
  if (strip_pending_ && pending_.size() > before) {
    // The first byte of the whole output decides; pending_ was empty before it.
    if (pending_[0] == ' ') pending_.erase(0, 1);
    strip_pending_ = false;
  }
  std::string text;
  const size_t used = append_utf8_lossy(pending_, /*final=*/false, text);
  pending_.erase(0, used);
  return text;
}

std::string StreamingDetokenizer::flush() {
  std::string text;
  append_utf8_lossy(pending_, /*final=*/true, text);
  pending_.clear();
  return text;
}

}  // namespace cairn::tok
