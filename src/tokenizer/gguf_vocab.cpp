// GGUF vocabularies (tokenizer.ggml.*): `llama` (SentencePiece BPE by score),
// `gpt2` (byte-level BPE with merges; tokenizer.ggml.pre picks the split regex)
// and `gemma4` (BPE over raw UTF-8 with "▁" for spaces and byte fallback).
#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "io/gguf.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/gguf_pre.h"
#include "tokenizer/loaders.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/post_processors.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/spm_model.h"

namespace cairn::tok {
namespace {

using io::GgufFile;
using io::GgufType;
const std::string kSpace = "\xE2\x96\x81";  // ▁

TokenKind kind_from_type(int64_t type) {
  switch (type) {
    case 2:
      return TokenKind::kUnknown;
    case 3:
      return TokenKind::kControl;
    case 4:
      return TokenKind::kUserDefined;
    case 5:
      return TokenKind::kUnused;
    case 6:
      return TokenKind::kByte;
    default:
      return TokenKind::kNormal;
  }
}

void read_tokens(const GgufFile& f, Pipeline& p) {
  const auto* tokens = f.find_array("tokenizer.ggml.tokens", GgufType::kString);
  if (!tokens) fail(ErrorCode::kBadFile, "{}: missing key 'tokenizer.ggml.tokens'", f.path());
  const uint64_t n = tokens->n_elems;
  const auto* scores = f.find("tokenizer.ggml.scores");
  if (scores &&
      (scores->type != GgufType::kArray || scores->n_elems < n ||
       (scores->elem_type != GgufType::kFloat32 && scores->elem_type != GgufType::kInt32)))
    fail(ErrorCode::kBadFile, "{}: key 'tokenizer.ggml.scores' must be {} float32 or int32 values",
         f.path(), n);
  const auto* types = f.find_array("tokenizer.ggml.token_type", GgufType::kInt32);
  if (types && types->n_elems < n)
    fail(ErrorCode::kBadFile, "{}: key 'tokenizer.ggml.token_type' has {} values for {} tokens",
         f.path(), types->n_elems, n);
  p.vocab.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    const auto id = static_cast<int32_t>(i);
    const float score = scores ? static_cast<float>(GgufFile::array_float(*scores, i)) : 0.0f;
    const TokenKind kind =
        types ? kind_from_type(GgufFile::array_int(*types, i)) : TokenKind::kNormal;
    p.vocab.set(id, std::string(tokens->strings[i]), score, kind);
  }
}

int32_t token_id(const GgufFile& f, const Pipeline& p, const char* key) {
  const auto value = f.find_int(key);
  if (!value) return -1;
  if (*value < 0 || *value >= p.vocab.size()) {
    if (*value == -1 || *value == 0xFFFFFFFF) return -1;  // "none" as some converters write it
    fail(ErrorCode::kBadFile, "{}: key '{}' is {}, outside the vocabulary of {}", f.path(), key,
         *value, p.vocab.size());
  }
  return static_cast<int32_t>(*value);
}

void read_special_ids(const GgufFile& f, Pipeline& p) {
  p.bos_id = token_id(f, p, "tokenizer.ggml.bos_token_id");
  p.pad_id = token_id(f, p, "tokenizer.ggml.padding_token_id");
  p.unk_id = token_id(f, p, "tokenizer.ggml.unknown_token_id");
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"}) {
    const int32_t id = token_id(f, p, key);
    if (id >= 0 && std::find(p.eos_ids.begin(), p.eos_ids.end(), id) == p.eos_ids.end())
      p.eos_ids.push_back(id);
  }
  if (auto t = f.find_string("tokenizer.chat_template")) p.chat_template = std::string(*t);
}

// Texts that llama.cpp treats as control tokens whatever their token_type says
// (converters often leave them "normal"): ends of generation, then fill-in-the-middle markers.
constexpr const char* kEndOfGeneration[] = {"<|eot_id|>",
                                            "<|im_end|>",
                                            "<|end|>",
                                            "<|return|>",
                                            "<|call|>",
                                            "<|flush|>",
                                            "<|calls|>",
                                            "<end_of_turn>",
                                            "<|endoftext|>",
                                            "</s>",
                                            "<|eom_id|>",
                                            "<EOT>",
                                            "_<EOT>",
                                            "[EOT]",
                                            "[EOS]",
                                            "<|end_of_text|>",
                                            "<end_of_utterance>",
                                            "<eos>",
                                            "<turn|>",
                                            "<|tool_response>",
                                            "<\xEF\xBD\x9C"
                                            "end\xE2\x96\x81"
                                            "of\xE2\x96\x81"
                                            "sentence\xEF\xBD\x9C>",
                                            "[e~[",
                                            "<|fim_repo|>",
                                            "<|repo_name|>",
                                            "<|file_sep|>"};
constexpr const char* kFillInTheMiddle[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>",          "<|fim_suffix|>",
    "<fim-suffix>",   "<fim_suffix>", "<SUF>",        "<|fim_middle|>", "<fim-middle>",
    "<fim_middle>",   "<MID>",        "<|fim_pad|>",  "<fim-pad>",      "<fim_pad>",
    "<fim-repo>",     "<REPO>",       "<reponame>"};

void mark_control_tokens(Pipeline& p) {
  for (const char* text : kEndOfGeneration) {
    const int32_t id = p.vocab.find(text);
    if (id < 0) continue;
    p.vocab.set_kind(id, TokenKind::kControl);
    if (std::find(p.eos_ids.begin(), p.eos_ids.end(), id) == p.eos_ids.end())
      p.eos_ids.push_back(id);
  }
  for (const char* text : kFillInTheMiddle) {
    if (const int32_t id = p.vocab.find(text); id >= 0) p.vocab.set_kind(id, TokenKind::kControl);
  }
  // Gemma 4 ends turns with "<|tool_response>"/"<turn|>"; its "</s>" is plain text.
  const int32_t s_id = p.vocab.find("</s>");
  if (s_id >= 0 && p.vocab.find("<|tool_response>") >= 0) {
    p.vocab.set_kind(s_id, TokenKind::kNormal);
    std::erase(p.eos_ids, s_id);
  }
}

// Control, user-defined and unknown tokens are cut out of the text first.
void add_special_tokens(const GgufFile& f, Pipeline& p) {
  std::string name(f.find_string("general.name").value_or(""));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool phi3 =
      name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;
  for (int32_t id = 0; id < p.vocab.size(); ++id) {
    const TokenKind kind = p.vocab.kind(id);
    if (kind != TokenKind::kControl && kind != TokenKind::kUserDefined &&
        kind != TokenKind::kUnknown)
      continue;
    AddedToken t{p.vocab.piece(id), id, kind != TokenKind::kUserDefined};
    const std::string& s = t.content;
    // Phi-3's chat markers swallow the white space after them.
    t.rstrip = phi3 && s != "<unk>" && s != "<s>" && s != "<|endoftext|>";
    p.added.add(std::move(t));
  }
}

std::string piece_bytes(const Pipeline& p, int32_t id, bool byte_level) {
  const TokenKind kind = p.vocab.kind(id);
  const std::string& piece = p.vocab.piece(id);
  if (kind == TokenKind::kControl || kind == TokenKind::kUserDefined || kind == TokenKind::kUnknown)
    return piece;
  if (byte_level) return byte_level_decode(piece);
  return sentencepiece_piece_bytes(piece, kSpace, kind == TokenKind::kByte);
}

void build_decode(Pipeline& p, bool byte_level, bool strip_leading_space) {
  p.decode.token_bytes.resize(p.vocab.size());
  for (int32_t id = 0; id < p.vocab.size(); ++id)
    p.decode.token_bytes[id] = piece_bytes(p, id, byte_level);
  p.decode.strip_leading_space = strip_leading_space;
}

void setup_spm(const GgufFile& f, Pipeline& p) {
  const bool prefix = f.find_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  std::vector<std::unique_ptr<Normalizer>> steps;
  if (prefix) steps.push_back(std::make_unique<PrependNormalizer>(" "));
  steps.push_back(std::make_unique<ReplaceNormalizer>(" ", kSpace));
  p.normalizer = std::make_unique<SequenceNormalizer>(std::move(steps));
  p.model = std::make_unique<SpmModel>(&p.vocab, p.unk_id);
  build_decode(p, false, prefix);
}

void read_merges(const GgufFile& f, BpeModel& model) {
  const auto* merges = f.find_array("tokenizer.ggml.merges", GgufType::kString);
  if (!merges) fail(ErrorCode::kBadFile, "{}: missing key 'tokenizer.ggml.merges'", f.path());
  for (std::string_view m : merges->strings) {
    const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
    if (space == std::string_view::npos) continue;
    model.add_merge(m.substr(0, space), m.substr(space + 1));
  }
}

void setup_bpe(const GgufFile& f, Pipeline& p, const std::string& pre, const GgufPre& config) {
  const bool gemma4 = pre == "gemma4";
  BpeOptions options;
  options.byte_level = config.byte_level;
  options.byte_fallback = !config.byte_level;
  options.ignore_merges = config.ignore_merges;
  options.whole_newline_runs = gemma4;
  auto model = std::make_unique<BpeModel>(&p.vocab, options);
  read_merges(f, *model);
  p.model = std::move(model);
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  for (const std::string& pattern : config.patterns)
    steps.push_back(std::make_unique<SplitPreTokenizer>(
        std::make_unique<Regex>(pattern, f.path() + ": tokenizer.ggml.pre " + pre),
        SplitBehavior::kIsolated, false));
  p.pre_tokenizer = std::make_unique<SequencePreTokenizer>(std::move(steps));
  if (config.escape_spaces) p.normalizer = std::make_unique<ReplaceNormalizer>(" ", kSpace);
  build_decode(p, config.byte_level, false);
}

}  // namespace

std::unique_ptr<Pipeline> load_gguf_vocab(const std::string& path) {
  const auto file = io::GgufFile::open(path);
  return load_gguf_vocab(*file);
}

std::unique_ptr<Pipeline> load_gguf_vocab(const GgufFile& f) {
  const std::string& path = f.path();
  auto p = std::make_unique<Pipeline>();
  p->source = path;
  const std::string model(f.find_string("tokenizer.ggml.model").value_or(""));
  read_tokens(f, *p);
  read_special_ids(f, *p);
  mark_control_tokens(*p);
  add_special_tokens(f, *p);
  bool add_bos = false;
  if (model == "llama") {
    setup_spm(f, *p);
    add_bos = true;
  } else if (model == "gpt2" || model == "gemma4") {
    const std::string pre(
        model == "gemma4" ? "gemma4" : f.find_string("tokenizer.ggml.pre").value_or("default"));
    const GgufPre config = gguf_pre_config(pre, path);
    setup_bpe(f, *p, pre, config);
    add_bos = config.add_bos;
  } else {
    fail(ErrorCode::kUnsupported,
         "{}: key 'tokenizer.ggml.model' is '{}' (cairn reads llama, gpt2, gemma4)", path, model);
  }
  add_bos = f.find_bool("tokenizer.ggml.add_bos_token").value_or(add_bos);
  const bool add_eos = f.find_bool("tokenizer.ggml.add_eos_token").value_or(false);
  const int32_t eos = p->eos_ids.empty() ? -1 : p->eos_ids.front();
  p->post_processor =
      std::make_unique<BosEosPostProcessor>(add_bos ? p->bos_id : -1, add_eos ? eos : -1);
  return p;
}

}  // namespace cairn::tok
