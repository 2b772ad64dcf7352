#include <cstring>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "tokenizer/loaders.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/post_processors.h"
#include "tokenizer/spm_model.h"

namespace cairn::tok {
namespace {

constexpr int32_t kUnkId = 0, kBosId = 1, kEosId = 2;

class Reader {
 public:
  Reader(const std::string& path, std::string bytes) : path_(path), bytes_(std::move(bytes)) {}
  bool at_end() const { return pos_ == bytes_.size(); }
  template <typename T>
  T read(const char* what, size_t index) {
    T value;
    need(sizeof(T), what, index);
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::string read_bytes(size_t n, size_t index) {
    need(n, "piece", index);
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  void need(size_t n, const char* what, size_t index) {
    if (bytes_.size() - pos_ < n)
      fail(ErrorCode::kBadFile, "{}: truncated at byte {} reading the {} of token {}", path_, pos_,
           what, index);
  }
  const std::string& path_;
  std::string bytes_;
  size_t pos_ = 0;
};

TokenKind kind_of(int32_t id, const std::string& piece) {
  if (id == kUnkId) return TokenKind::kUnknown;
  if (id == kBosId || id == kEosId) return TokenKind::kControl;
  return parse_byte_piece(piece) >= 0 ? TokenKind::kByte : TokenKind::kNormal;
}

}  // namespace

std::unique_ptr<Pipeline> load_llama2c(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(ErrorCode::kIo, "{}: cannot open the llama2.c tokenizer", path);
  Reader reader(path, std::string(std::istreambuf_iterator<char>(file), {}));
  auto p = std::make_unique<Pipeline>();
  p->source = path;
  const auto max_len = reader.read<int32_t>("max_token_length", 0);
  if (max_len <= 0 || max_len > 1 << 16)
    fail(ErrorCode::kBadFile, "{}: max_token_length {} is out of range", path, max_len);
  for (size_t id = 0; !reader.at_end(); ++id) {
    const float score = reader.read<float>("score", id);
    const auto len = reader.read<int32_t>("length", id);
    if (len < 0 || len > max_len)
      fail(ErrorCode::kBadFile, "{}: token {} has length {} (max_token_length {})", path, id, len,
           max_len);
    std::string piece = reader.read_bytes(static_cast<size_t>(len), id);
    const TokenKind kind = kind_of(static_cast<int32_t>(id), piece);
    p->vocab.add(std::move(piece), score, kind);
  }
  if (p->vocab.size() <= kEosId)
    fail(ErrorCode::kBadFile, "{}: only {} tokens", path, p->vocab.size());
  for (int32_t id = 0; id < p->vocab.size(); ++id) {
    const TokenKind kind = p->vocab.kind(id);
    p->decode.token_bytes.push_back(
        sentencepiece_piece_bytes(p->vocab.piece(id), "", kind == TokenKind::kByte));
  }
  p->decode.strip_leading_space = true;  // llama2.c drops the first piece's space after BOS
  p->normalizer = std::make_unique<PrependNormalizer>(" ");  // the pieces hold real spaces
  p->model = std::make_unique<SpmModel>(&p->vocab, kUnkId);
  p->post_processor = std::make_unique<BosEosPostProcessor>(kBosId, -1);
  p->bos_id = kBosId;
  p->eos_ids = {kEosId};
  p->unk_id = kUnkId;
  return p;
}

}  // namespace cairn::tok
