// A running request's text: ids become UTF-8 deltas through the streaming
// detokenizer, and stop strings are held back until they can no longer match
// (tokenizer/stop_matcher.h). Without a tokenizer there is no text.
#pragma once

#include <memory>
#include <string>

#include "sched/request.h"
#include "tokenizer/stop_matcher.h"
#include "tokenizer/tokenizer.h"

namespace cairn {

class SeqOutput {
 public:
  SeqOutput(const tok::Tokenizer* tokenizer, const Request& r);

  struct Delta {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string completed (text ends before it)
    int32_t stop_index = -1;
  };
  // The next sampled id. After a stop, returns nothing.
  Delta feed(int32_t id);
  // At the end of generation (not after a stop): whatever was held back.
  std::string flush();

 private:
  std::unique_ptr<tok::StreamingDetokenizer> detok_;
  tok::StopMatcher stops_;
};

}  // namespace cairn
