// BPE by merge rank (HF "BPE" model, GGUF `gpt2` and `gemma4` vocabularies):
// symbols start as bytes (byte-level) or characters, and the adjacent pair with
// the lowest merge rank is merged first (ties: leftmost), through a heap over a
// linked list of symbols, so a word of n symbols costs O(n log n).
#pragma once

#include <array>
#include <string>

#include "tokenizer/flat_index.h"
#include "tokenizer/parts.h"

namespace cairn::tok {

struct BpeOptions {
  bool byte_level = false;          // symbols start as bytes in GPT-2's alphabet
  bool byte_fallback = false;       // characters not in the vocabulary become "<0xXX>" tokens
  bool ignore_merges = false;       // a word that is itself a token is emitted whole
  bool fuse_unk = false;            // consecutive unknown characters give one unknown token
  bool whole_newline_runs = false;  // a run of '\n' that is a token is emitted whole
  int32_t unk_id = -1;
  std::string continuing_subword_prefix;  // prefix of every non-initial symbol ("##")
  std::string end_of_word_suffix;         // suffix of the last symbol ("</w>")
};

class BpeModel final : public Model {
 public:
  // vocab must outlive the model (both live in one Pipeline).
  BpeModel(const Vocab* vocab, BpeOptions options);
  // Appends a merge with the next rank; false when a side or the result is not a token.
  bool add_merge(std::string_view left, std::string_view right);
  void encode(std::string_view word, std::vector<int32_t>& out) const override;

 private:
  struct Symbol {
    int32_t id;
    int prev, next;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  int32_t whole_word_id(std::string_view word) const;
  void initial_symbols(std::string_view word, std::vector<Symbol>& symbols) const;
  void merge(std::vector<Symbol>& symbols) const;

  const Vocab* vocab_;
  BpeOptions options_;
  PairIndex merges_;
  std::vector<std::string> raw_pieces_;  // byte-level with ignore_merges: each id's raw bytes
  StringIndex raw_ids_{&raw_pieces_};
  std::array<int32_t, 256> byte_ids_;  // a byte's token, -1 if none
  int32_t n_merges_ = 0;
};

}  // namespace cairn::tok
