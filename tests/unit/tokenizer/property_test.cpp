// Properties over random inputs (rapidcheck): lossless round trips, streaming
// decode equal to one-shot decode and always valid UTF-8, stop matching
// independent of how the text is chunked.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tokenizer/byte_level.h"
#include "tokenizer/stop_matcher.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace cairn::tok {
namespace {

// Valid UTF-8 from a mix of ASCII, white space, Latin, CJK, emoji and combining marks.
rc::Gen<std::string> gen_text() {
  const auto code_point = rc::gen::oneOf(
      rc::gen::inRange<uint32_t>(0x20, 0x7F), rc::gen::element<uint32_t>(' ', '\n', '\t', '\r'),
      rc::gen::inRange<uint32_t>(0xA0, 0x250), rc::gen::inRange<uint32_t>(0x300, 0x370),
      rc::gen::inRange<uint32_t>(0x4E00, 0x4F00), rc::gen::inRange<uint32_t>(0x1F600, 0x1F650),
      rc::gen::inRange<uint32_t>(0x0, 0x20));
  return rc::gen::map(rc::gen::container<std::vector<uint32_t>>(code_point),
                      [](const std::vector<uint32_t>& cps) {
                        std::string s;
                        for (uint32_t cp : cps) append_utf8(cp, s);
                        return s;
                      });
}

// A byte-level BPE tokenizer.json: the 256 byte characters and a few merges.
std::string tiny_byte_level_path() {
  static const std::string path = [] {
    const std::string dir = ::testing::TempDir() + "/cairn_tok_byte_level";
    std::filesystem::create_directories(dir);
    const std::string g = byte_level_char(' ');
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) vocab[byte_level_char(static_cast<uint8_t>(b))] = b;
    vocab[g + "t"] = 256;
    vocab["he"] = 257;
    vocab[g + "the"] = 258;
    vocab[g + g] = 259;
    const nlohmann::json j = {
        {"model",
         {{"type", "BPE"},
          {"vocab", vocab},
          {"merges", {g + " t", "h e", g + "t he", g + " " + g}}}},
        {"pre_tokenizer",
         {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
        {"decoder", {{"type", "ByteLevel"}}}};
    std::ofstream(dir + "/tokenizer.json") << j.dump();
    return dir + "/tokenizer.json";
  }();
  return path;
}

const std::string kStories = std::string(CAIRN_SHARED_DIR) + "/models/stories260K/tok512.bin";

std::string stream_decode(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  StreamingDetokenizer s(tok);
  std::string out;
  for (int32_t id : ids) {
    const std::string piece = s.feed(id);
    RC_ASSERT(is_valid_utf8(piece));
    out += piece;
  }
  const std::string tail = s.flush();
  RC_ASSERT(is_valid_utf8(tail));
  return out + tail;
}

RC_GTEST_PROP(Property, ByteLevelRoundTripIsLossless, ()) {
  static const auto tok = load_tokenizer(tiny_byte_level_path());
  const std::string text = *gen_text();
  RC_ASSERT(tok->decode(tok->encode(text)) == text);
}

RC_GTEST_PROP(Property, SentencePieceRoundTripIsLossless, ()) {
  if (!std::filesystem::exists(kStories)) RC_DISCARD("missing stories260K");
  static const auto tok = load_tokenizer(kStories);
  const std::string text = *gen_text();
  RC_ASSERT(tok->decode(tok->encode(text, {.add_bos = true})) == text);
}

RC_GTEST_PROP(Property, StreamingEqualsOneShotOnRandomIds, ()) {
  static const auto byte_level = load_tokenizer(tiny_byte_level_path());
  const auto ids = *rc::gen::container<std::vector<int32_t>>(rc::gen::inRange(0, 264));
  RC_ASSERT(stream_decode(*byte_level, ids) == byte_level->decode(ids));
  RC_ASSERT(is_valid_utf8(byte_level->decode(ids)));
  if (std::filesystem::exists(kStories)) {
    static const auto spm = load_tokenizer(kStories);
    const auto spm_ids = *rc::gen::container<std::vector<int32_t>>(rc::gen::inRange(0, 515));
    RC_ASSERT(stream_decode(*spm, spm_ids) == spm->decode(spm_ids));
  }
}

RC_GTEST_PROP(Property, StopMatchingIgnoresChunking, ()) {
  const std::string alphabet = "ab\n";
  const auto text = *rc::gen::container<std::string>(rc::gen::elementOf(alphabet));
  const auto stop =
      *rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::elementOf(alphabet)));
  const auto cuts = *rc::gen::container<std::vector<size_t>>(rc::gen::inRange<size_t>(0, 8));
  StopMatcher m({stop});
  std::string out;
  size_t pos = 0;
  for (size_t k = 0; pos < text.size() && !m.stopped(); ++k) {
    const size_t n = k < cuts.size() ? cuts[k] : text.size();
    out += m.feed(std::string_view(text).substr(pos, n)).text;
    pos += n;
  }
  out += m.flush();
  const size_t hit = text.find(stop);
  RC_ASSERT(m.stopped() == (hit != std::string::npos));
  RC_ASSERT(out == text.substr(0, hit));
}

}  // namespace
}  // namespace cairn::tok
