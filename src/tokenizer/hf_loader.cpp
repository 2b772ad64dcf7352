// tokenizer.json (HF tokenizers' format) with tokenizer_config.json,
// special_tokens_map.json and generation_config.json beside it.
#include <filesystem>

#include "core/error.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/hf_components.h"
#include "tokenizer/loaders.h"

namespace cairn::tok {
namespace {

constexpr int64_t kMaxVocab = 1 << 24;

void read_vocab(const JsonNode& model, Vocab& vocab) {
  const JsonNode v = model.at("vocab");
  if (!v.value().is_object()) v.fail_here("expected an object of piece: id");
  for (const auto& [piece, id] : v.value().items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= kMaxVocab)
      fail(ErrorCode::kBadFile, "{}: {}[\"{}\"]: expected an id in [0, {})", v.file(), v.path(),
           piece, kMaxVocab);
    vocab.set(static_cast<int32_t>(id.get<int64_t>()), piece, 0.0f, TokenKind::kNormal);
  }
}

void read_added_tokens(const JsonNode& root, Pipeline& p) {
  if (!root.has("added_tokens")) return;
  const JsonNode list = root.at("added_tokens");
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonNode t = list.at(i);
    const int64_t id = t.at("id").as_int();
    if (id < 0 || id >= kMaxVocab) t.at("id").fail_here("id out of range");
    AddedToken token{t.string("content"),         static_cast<int32_t>(id),
                     t.bool_or("special", false), t.bool_or("lstrip", false),
                     t.bool_or("rstrip", false),  t.bool_or("single_word", false)};
    const TokenKind kind = token.special ? TokenKind::kControl : TokenKind::kUserDefined;
    p.vocab.set(token.id, token.content, 0.0f, kind);
    // HF's default: special tokens are matched in the raw text, others after normalization.
    const bool normalized = t.bool_or("normalized", !token.special);
    (normalized && p.normalizer ? p.added_normalized : p.added).add(std::move(token));
  }
}

void read_merges(const JsonNode& model, BpeModel& bpe) {
  if (!model.has("merges")) return;
  const JsonNode merges = model.at("merges");
  for (size_t i = 0; i < merges.size(); ++i) {
    const JsonNode m = merges.at(i);
    if (m.value().is_string()) {
      const std::string s = m.as_string();
      const size_t space = s.find(' ');
      if (space == std::string::npos) m.fail_here("expected \"left right\"");
      bpe.add_merge(std::string_view(s).substr(0, space), std::string_view(s).substr(space + 1));
    } else {
      if (m.size() != 2) m.fail_here("expected [left, right]");
      bpe.add_merge(m.at(0).as_string(), m.at(1).as_string());
    }
  }
}

void build_model(const JsonNode& root, Pipeline& p, bool byte_level) {
  const JsonNode model = root.at("model");
  const std::string type = model.string_or("type", "BPE");
  if (type != "BPE")
    fail(ErrorCode::kUnsupported, "{}: $.model.type: model type '{}' is not supported (BPE is)",
         root.file(), type);
  BpeOptions o;
  o.byte_level = byte_level;
  o.byte_fallback = model.bool_or("byte_fallback", false);
  o.ignore_merges = model.bool_or("ignore_merges", false);
  o.fuse_unk = model.bool_or("fuse_unk", false);
  o.continuing_subword_prefix = model.string_or("continuing_subword_prefix", "");
  o.end_of_word_suffix = model.string_or("end_of_word_suffix", "");
  const std::string unk = model.string_or("unk_token", "");
  o.unk_id = unk.empty() ? -1 : p.vocab.find(unk);
  p.unk_id = o.unk_id;
  auto bpe = std::make_unique<BpeModel>(&p.vocab, std::move(o));
  read_merges(model, *bpe);
  p.model = std::move(bpe);
}

void build_decode_table(const JsonNode& root, Pipeline& p) {
  DecoderSteps steps;
  if (root.has("decoder")) build_decoder(root.at("decoder"), steps);
  p.decode.token_bytes.resize(p.vocab.size());
  for (int32_t id = 0; id < p.vocab.size(); ++id)
    p.decode.token_bytes[id] = apply_decoder(steps, p.vocab.piece(id));
  p.decode.strip_leading_space = steps.strip_leading_space;
}

JsonNode section(const JsonNode& root, const char* key, const nlohmann::json& null) {
  return root.has(key) ? root.at(key) : JsonNode(null, std::string("$.") + key, root.file());
}

}  // namespace

void read_hf_configs(const std::string& folder, Pipeline& p);  // hf_config.cpp

namespace {

std::unique_ptr<Pipeline> load_hf_json(const nlohmann::json& j, const std::string& json_path) {
  const nlohmann::json null;
  const JsonNode root(j, "$", json_path);
  if (!j.is_object()) root.fail_here("expected an object");
  auto p = std::make_unique<Pipeline>();
  p->source = json_path;
  read_vocab(root.at("model"), p->vocab);
  p->normalizer = build_normalizer(section(root, "normalizer", null));
  read_added_tokens(root, *p);
  bool byte_level = false;
  p->pre_tokenizer = build_pre_tokenizer(section(root, "pre_tokenizer", null), byte_level);
  build_model(root, *p, byte_level);
  p->post_processor = build_post_processor(section(root, "post_processor", null), p->vocab);
  build_decode_table(root, *p);
  return p;
}

}  // namespace

std::unique_ptr<Pipeline> load_hf(const std::string& json_path, const std::string& folder) {
  auto p = load_hf_json(read_json_file(json_path), json_path);
  if (!folder.empty()) read_hf_configs(folder, *p);
  return p;
}

std::unique_ptr<Pipeline> load_hf_text(std::string_view json_text, const std::string& name) {
  return load_hf_json(parse_json_text(json_text, name), name);
}

}  // namespace cairn::tok
