// SentencePiece BPE by score (llama2.c tokenizer.bin, GGUF `llama` vocabularies):
// start from UTF-8 characters, repeatedly merge the adjacent pair whose
// concatenation is the highest-scoring vocabulary piece (ties: leftmost), then
// emit pieces, falling back to "<0xXX>" byte tokens for text not in the vocabulary.
#pragma once

#include <array>

#include "tokenizer/parts.h"

namespace cairn::tok {

class SpmModel final : public Model {
 public:
  // vocab must outlive the model (both live in one Pipeline).
  SpmModel(const Vocab* vocab, int32_t unk_id);
  void encode(std::string_view word, std::vector<int32_t>& out) const override;

 private:
  void emit_bytes(std::string_view text, std::vector<int32_t>& out) const;

  const Vocab* vocab_;
  int32_t unk_id_;
  std::array<int32_t, 256> byte_ids_;  // -1 where a byte has no token
};

}  // namespace cairn::tok
