#include "engine/seq_output.h"

namespace cairn {

SeqOutput::SeqOutput(const tok::Tokenizer* tokenizer, const Request& r) : stops_(r.stop_strings) {
  if (tokenizer != nullptr)
    detok_ = std::make_unique<tok::StreamingDetokenizer>(*tokenizer, r.skip_special);
}

SeqOutput::Delta SeqOutput::feed(int32_t id) {
  Delta d;
  if (!detok_ || stops_.stopped()) return d;
  tok::StopMatcher::Result r = stops_.feed(detok_->feed(id));
  d.text = std::move(r.text);
  d.stopped = r.stopped;
  d.stop_index = r.stop_index;
  return d;
}

std::string SeqOutput::flush() {
  if (!detok_ || stops_.stopped()) return {};
  tok::StopMatcher::Result r = stops_.feed(detok_->flush());
  return r.stopped ? r.text : r.text + stops_.flush();
}

}  // namespace cairn
