#include "tokenizer/hf_components.h"

#include "core/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/post_processors.h"
#include "tokenizer/pre_tokenizers.h"

namespace cairn::tok {
namespace {

[[noreturn]] void unknown_type(const JsonNode& node, const std::string& type, const char* section) {
  fail(ErrorCode::kUnsupported, "{}: {}.type: {} type '{}' is not supported", node.file(),
       node.path(), section, type);
}

// {"String": s} or {"Regex": r} → a literal (is_regex false) or a pattern.
std::pair<std::string, bool> read_pattern(const JsonNode& node) {
  const JsonNode p = node.at("pattern");
  if (p.has("String")) return {p.string("String"), false};
  if (p.has("Regex")) return {p.string("Regex"), true};
  p.fail_here("expected {\"String\": ...} or {\"Regex\": ...}");
}

template <typename T, typename Fn>
std::vector<std::unique_ptr<T>> build_list(const JsonNode& list, Fn fn) {
  std::vector<std::unique_ptr<T>> steps;
  for (size_t i = 0; i < list.size(); ++i) {
    auto step = fn(list.at(i));
    if (step) steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace

std::unique_ptr<Normalizer> build_normalizer(const JsonNode& node) {
  if (node.is_null()) return nullptr;
  const std::string type = node.string("type");
  if (type == "Sequence")
    return std::make_unique<SequenceNormalizer>(
        build_list<Normalizer>(node.at("normalizers"), build_normalizer));
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::kNfc);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::kNfd);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::kNfkc);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::kNfkd);
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(node.string("prepend"));
  if (type == "Strip")
    return std::make_unique<StripNormalizer>(node.bool_or("strip_left", true),
                                             node.bool_or("strip_right", true));
  if (type == "Replace") {
    auto [pattern, is_regex] = read_pattern(node);
    if (!is_regex) return std::make_unique<ReplaceNormalizer>(pattern, node.string("content"));
    return std::make_unique<RegexReplaceNormalizer>(
        std::make_unique<Regex>(pattern, node.file() + ": " + node.path()), node.string("content"));
  }
  unknown_type(node, type, "normalizer");
}

namespace {

SplitBehavior read_behavior(const JsonNode& node) {
  const std::string b = node.string_or("behavior", "Isolated");
  if (b == "Removed") return SplitBehavior::kRemoved;
  if (b == "Isolated") return SplitBehavior::kIsolated;
  if (b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (b == "Contiguous") return SplitBehavior::kContiguous;
  node.at("behavior").fail_here("unknown split behavior '" + b + "'");
}

std::unique_ptr<PreTokenizer> regex_split(const JsonNode& node, const std::string& pattern,
                                          SplitBehavior behavior, bool invert) {
  return std::make_unique<SplitPreTokenizer>(
      std::make_unique<Regex>(pattern, node.file() + ": " + node.path()), behavior, invert);
}

PrependScheme read_prepend_scheme(const JsonNode& node) {
  if (!node.has("prepend_scheme"))
    return node.bool_or("add_prefix_space", true) ? PrependScheme::kAlways : PrependScheme::kNever;
  const std::string s = node.string("prepend_scheme");
  if (s == "always") return PrependScheme::kAlways;
  if (s == "first") return PrependScheme::kFirst;
  if (s == "never") return PrependScheme::kNever;
  node.at("prepend_scheme").fail_here("unknown prepend_scheme '" + s + "'");
}

}  // namespace

std::unique_ptr<PreTokenizer> build_pre_tokenizer(const JsonNode& node, bool& byte_level) {
  if (node.is_null()) return nullptr;
  const std::string type = node.string("type");
  if (type == "Sequence")
    return std::make_unique<SequencePreTokenizer>(build_list<PreTokenizer>(
        node.at("pretokenizers"),
        [&](const JsonNode& n) { return build_pre_tokenizer(n, byte_level); }));
  if (type == "Split") {
    auto [pattern, is_regex] = read_pattern(node);
    const SplitBehavior behavior = read_behavior(node);
    const bool invert = node.bool_or("invert", false);
    if (is_regex) return regex_split(node, pattern, behavior, invert);
    return std::make_unique<SplitPreTokenizer>(pattern, behavior, invert);
  }
  if (type == "ByteLevel") {
    byte_level = true;
    return std::make_unique<ByteLevelPreTokenizer>(node.bool_or("add_prefix_space", false),
                                                   node.bool_or("use_regex", true));
  }
  if (type == "Metaspace")
    return std::make_unique<MetaspacePreTokenizer>(node.string_or("replacement", "\xE2\x96\x81"),
                                                   read_prepend_scheme(node),
                                                   node.bool_or("split", true));
  if (type == "Digits")
    return std::make_unique<DigitsPreTokenizer>(node.bool_or("individual_digits", false));
  if (type == "Whitespace")
    return regex_split(node, R"(\w+|[^\w\s]+)", SplitBehavior::kRemoved, true);
  if (type == "WhitespaceSplit") return regex_split(node, R"(\s+)", SplitBehavior::kRemoved, false);
  unknown_type(node, type, "pre-tokenizer");
}

namespace {

int32_t special_id(const JsonNode& node, const Vocab& vocab, const std::string& name) {
  const int32_t id = vocab.find(name);
  if (id < 0) node.fail_here("unknown special token '" + name + "'");
  return id;
}

// TemplateProcessing's "single" template: special tokens around "$A".
std::unique_ptr<PostProcessor> template_processing(const JsonNode& node, const Vocab& vocab) {
  const JsonNode single = node.at("single");
  std::vector<int32_t> before, after;
  bool seen_sequence = false;
  for (size_t i = 0; i < single.size(); ++i) {
    const JsonNode piece = single.at(i);
    if (piece.has("Sequence")) {
      seen_sequence = true;
      continue;
    }
    const std::string name = piece.at("SpecialToken").string("id");
    std::vector<int32_t> ids;
    const JsonNode specials = node.at("special_tokens");
    if (specials.has(name)) {
      const JsonNode list = specials.at(name).at("ids");
      for (size_t k = 0; k < list.size(); ++k)
        ids.push_back(static_cast<int32_t>(list.at(k).as_int()));
    } else {
      ids.push_back(special_id(piece, vocab, name));
    }
    auto& side = seen_sequence ? after : before;
    side.insert(side.end(), ids.begin(), ids.end());
  }
  return std::make_unique<TemplatePostProcessor>(std::move(before), std::move(after));
}

// BertProcessing / RobertaProcessing: "cls" and "sep" as [token, id].
std::unique_ptr<PostProcessor> cls_sep(const JsonNode& node) {
  const auto cls = static_cast<int32_t>(node.at("cls").at(1).as_int());
  const auto sep = static_cast<int32_t>(node.at("sep").at(1).as_int());
  return std::make_unique<TemplatePostProcessor>(std::vector<int32_t>{cls},
                                                 std::vector<int32_t>{sep});
}

}  // namespace

std::unique_ptr<PostProcessor> build_post_processor(const JsonNode& node, const Vocab& vocab) {
  if (node.is_null()) return nullptr;
  const std::string type = node.string("type");
  if (type == "ByteLevel") return nullptr;  // only trims offsets, which cairn does not return
  if (type == "TemplateProcessing") return template_processing(node, vocab);
  if (type == "BertProcessing" || type == "RobertaProcessing") return cls_sep(node);
  if (type == "Sequence")
    return std::make_unique<SequencePostProcessor>(build_list<PostProcessor>(
        node.at("processors"), [&](const JsonNode& n) { return build_post_processor(n, vocab); }));
  unknown_type(node, type, "post-processor");
}

namespace {

void build_decoder_into(const JsonNode& node, DecoderSteps& steps, bool& fused) {
  using Kind = DecoderSteps::Step::Kind;
  const std::string type = node.string("type");
  if (type == "Sequence") {
    const JsonNode list = node.at("decoders");
    for (size_t i = 0; i < list.size(); ++i) build_decoder_into(list.at(i), steps, fused);
  } else if (type == "Replace") {
    auto [pattern, is_regex] = read_pattern(node);
    if (is_regex) node.fail_here("a Replace decoder with a regex is not supported");
    steps.per_token.push_back({Kind::kReplace, pattern, node.string("content")});
  } else if (type == "ByteFallback") {
    steps.per_token.push_back({Kind::kByteFallback, "", ""});
  } else if (type == "ByteLevel") {
    steps.per_token.push_back({Kind::kByteLevel, "", ""});
  } else if (type == "Fuse") {
    fused = true;
  } else if (type == "Strip") {
    const std::string content = node.string_or("content", " ");
    const int64_t start = node.int_or("start", 0), stop = node.int_or("stop", 0);
    if (fused) {
      // After Fuse the output is one string: only "drop one leading space" is supported.
      if (content != " " || start > 1 || stop != 0)
        node.fail_here(
            "a Strip decoder after Fuse is supported only with content ' ', start 1, stop 0");
      steps.strip_leading_space |= start == 1;
    } else {
      steps.per_token.push_back({Kind::kStrip, content, "", start, stop});
    }
  } else if (type == "Metaspace") {
    steps.per_token.push_back({Kind::kReplace, node.string_or("replacement", "\xE2\x96\x81"), " "});
    steps.strip_leading_space |= read_prepend_scheme(node) != PrependScheme::kNever;
  } else {
    unknown_type(node, type, "decoder");
  }
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos, std::string::npos);
  return out;
}

std::string strip_chars(std::string s, const std::string& c, int64_t start, int64_t stop) {
  for (int64_t i = 0; i < start && !c.empty() && s.compare(0, c.size(), c) == 0; ++i)
    s.erase(0, c.size());
  for (int64_t i = 0; i < stop && !c.empty() && s.size() >= c.size() &&
                      s.compare(s.size() - c.size(), c.size(), c) == 0;
       ++i)
    s.erase(s.size() - c.size());
  return s;
}

}  // namespace

void build_decoder(const JsonNode& node, DecoderSteps& steps) {
  if (node.is_null()) return;
  bool fused = false;
  build_decoder_into(node, steps, fused);
}

std::string apply_decoder(const DecoderSteps& steps, const std::string& piece) {
  using Kind = DecoderSteps::Step::Kind;
  std::string s = piece;
  for (const auto& step : steps.per_token) {
    switch (step.kind) {
      case Kind::kReplace:
        s = replace_all(s, step.from, step.to);
        break;
      case Kind::kByteFallback: {
        const int byte = parse_byte_piece(s);
        if (byte >= 0) s.assign(1, static_cast<char>(byte));
        break;
      }
      case Kind::kByteLevel:
        s = byte_level_decode(s);
        break;
      case Kind::kStrip:
        s = strip_chars(std::move(s), step.from, step.start, step.stop);
        break;
    }
  }
  return s;
}

}  // namespace cairn::tok
