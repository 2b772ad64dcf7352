#include "tokenizer/tokenizer.h"

#include "core/error.h"
#include "tokenizer/parts.h"
#include "tokenizer/utf8.h"
#include "tokenizer/word_cache.h"

namespace cairn::tok {
namespace {

const std::string kEmpty;

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Pipeline> pipeline)
    : p_(std::move(pipeline)), cache_(std::make_unique<WordCache>()) {
  CAIRN_CHECK(p_ && p_->model, "a tokenizer needs a model");
  if (p_->decode.token_bytes.size() < static_cast<size_t>(p_->vocab.size()))
    p_->decode.token_bytes.resize(p_->vocab.size());
}

Tokenizer::~Tokenizer() = default;

void Tokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (cache_->lookup(word, out)) return;
  const size_t start = out.size();
  p_->model->encode(word, out);
  cache_->insert(word, out.data() + start, out.size() - start);
}

void Tokenizer::encode_text(std::string_view text, bool first_segment,
                            std::vector<int32_t>& out) const {
  Words words;
  words.text.assign(text);
  words.first_segment = first_segment;
  if (p_->normalizer) p_->normalizer->apply(words.text);
  if (words.text.empty()) return;
  if (!p_->added_normalized.empty()) {
    std::vector<Segment> segments;
    p_->added_normalized.split(words.text, true, segments);
    if (segments.size() != 1 || segments[0].id >= 0) {
      for (const Segment& s : segments) {
        if (s.id >= 0) {
          out.push_back(s.id);
        } else {
          Words part{std::string(s.text), {}, first_segment && s.text.data() == words.text.data()};
          pre_tokenize_and_encode(part, out);
        }
      }
      return;
    }
  }
  pre_tokenize_and_encode(words, out);
}

void Tokenizer::pre_tokenize_and_encode(Words& words, std::vector<int32_t>& out) const {
  words.spans.push_back({0, static_cast<uint32_t>(words.text.size())});
  if (p_->pre_tokenizer) p_->pre_tokenizer->apply(words);
  const std::string_view all = words.text;
  for (auto [begin, end] : words.spans) {
    if (end > begin) encode_word(all.substr(begin, end - begin), out);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  std::string repaired;
  if (!is_valid_utf8(text)) {  // as HF does: invalid bytes become U+FFFD first
    append_utf8_lossy(text, /*final=*/true, repaired);
    text = repaired;
  }
  std::vector<int32_t> ids;
  std::vector<Segment> segments;
  p_->added.split(text, options.parse_special, segments);
  bool first = true;
  for (const Segment& s : segments) {
    if (s.id >= 0) {
      ids.push_back(s.id);
    } else {
      encode_text(s.text, first, ids);
    }
    first = false;
  }
  if (options.add_special_tokens && p_->post_processor) p_->post_processor->apply(ids);
  if (options.add_bos && p_->bos_id >= 0 && (ids.empty() || ids[0] != p_->bos_id))
    ids.insert(ids.begin(), p_->bos_id);
  return ids;
}

void Tokenizer::append_token_bytes(int32_t id, bool skip_special, std::string& out) const {
  if (!p_->vocab.contains(id)) return;
  if (skip_special && is_special(id)) return;
  out.append(p_->decode.token_bytes[id]);
}

bool Tokenizer::strips_leading_space() const {
  return p_->decode.strip_leading_space;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string bytes;
  for (int32_t id : ids) append_token_bytes(id, skip_special, bytes);
  std::string_view view = bytes;
  if (p_->decode.strip_leading_space && !view.empty() && view[0] == ' ') view.remove_prefix(1);
  std::string text;
  text.reserve(view.size());
  append_utf8_lossy(view, /*final=*/true, text);
  return text;
}

const std::string& Tokenizer::piece(int32_t id) const {
  return p_->vocab.contains(id) ? p_->vocab.piece(id) : kEmpty;
}
int32_t Tokenizer::token_to_id(std::string_view piece) const {
  return p_->vocab.find(piece);
}
int32_t Tokenizer::vocab_size() const {
  return p_->vocab.size();
}
int32_t Tokenizer::bos_id() const {
  return p_->bos_id;
}
const std::vector<int32_t>& Tokenizer::eos_ids() const {
  return p_->eos_ids;
}
int32_t Tokenizer::pad_id() const {
  return p_->pad_id;
}
int32_t Tokenizer::unk_id() const {
  return p_->unk_id;
}
bool Tokenizer::is_special(int32_t id) const {
  if (!p_->vocab.contains(id)) return false;
  const TokenKind kind = p_->vocab.kind(id);
  return kind == TokenKind::kControl;
}
const std::string& Tokenizer::chat_template() const {
  return p_->chat_template;
}
const std::string& Tokenizer::source() const {
  return p_->source;
}

}  // namespace cairn::tok
