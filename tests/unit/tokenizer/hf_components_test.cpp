// tokenizer.json pieces on small inputs. Expected values are the examples of
// HF tokenizers' documentation (split behaviours, Metaspace, Digits, Whitespace)
// or follow from a tiny hand-written vocabulary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/tokenizer.h"

namespace cairn::tok {
namespace {

std::vector<std::string> words_of(const PreTokenizer& pre, const std::string& text) {
  Words w;
  w.text = text;
  w.spans.push_back({0, static_cast<uint32_t>(text.size())});
  pre.apply(w);
  std::vector<std::string> out;
  for (auto [b, e] : w.spans) out.push_back(w.text.substr(b, e - b));
  return out;
}

using Strings = std::vector<std::string>;

TEST(SplitBehavior, DocumentationExample) {
  const std::string text = "the-final--countdown";
  auto split = [&](SplitBehavior b) { return words_of(SplitPreTokenizer("-", b, false), text); };
  EXPECT_EQ(split(SplitBehavior::kRemoved), (Strings{"the", "final", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kIsolated), (Strings{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kMergedWithPrevious),
            (Strings{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::kMergedWithNext), (Strings{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split(SplitBehavior::kContiguous), (Strings{"the", "-", "final", "--", "countdown"}));
}

TEST(PreTokenizers, DocumentationExamples) {
  EXPECT_EQ(
      words_of(MetaspacePreTokenizer("\xE2\x96\x81", PrependScheme::kAlways, true), "Hey friend!"),
      (Strings{"\xE2\x96\x81Hey",
               "\xE2\x96\x81"
               "friend!"}));
  EXPECT_EQ(words_of(DigitsPreTokenizer(true), "Call 123 please"),
            (Strings{"Call ", "1", "2", "3", " please"}));
  EXPECT_EQ(words_of(DigitsPreTokenizer(false), "Call 123 please"),
            (Strings{"Call ", "123", " please"}));
  EXPECT_EQ(words_of(ByteLevelPreTokenizer(false, true), "Hello my friend, how are you?"),
            (Strings{"Hello", " my", " friend", ",", " how", " are", " you", "?"}));
  SplitPreTokenizer invert(std::make_unique<Regex>("[a-z]+", "test"), SplitBehavior::kRemoved,
                           true);
  EXPECT_EQ(words_of(invert, "ab12cd"), (Strings{"ab", "cd"}));
}

class TinyJson : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& body) {
    const std::string dir = ::testing::TempDir() + "/cairn_tok_" + name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/tokenizer.json") << body;
    return dir + "/tokenizer.json";
  }
  std::string error_of(const std::string& path) {
    try {
      load_tokenizer(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

// A byte-level-free BPE: a b c, merges "a b" (rank 0) then "ab c" (rank 1).
const char* kTiny = R"({
  "added_tokens": [
    {"id": 5, "content": "<x>", "special": true, "lstrip": true, "rstrip": false, "single_word": false, "normalized": false},
    {"id": 6, "content": "zz", "special": false, "lstrip": false, "rstrip": true, "single_word": true, "normalized": false}
  ],
  "normalizer": {"type": "Lowercase"},
  "pre_tokenizer": {"type": "WhitespaceSplit"},
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {}},
  "decoder": null,
  "model": {"type": "BPE", "unk_token": "?", "fuse_unk": true,
            "vocab": {"?": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "abc": 7},
            "merges": ["a b", ["ab", "c"]]}
})";

TEST_F(TinyJson, EncodesWithMergesAddedTokensAndTemplate) {
  auto tok = load_tokenizer(write("tiny", kTiny));
  using Ids = std::vector<int32_t>;
  EXPECT_EQ(tok->encode("ABC ab"), (Ids{7, 4}));
  EXPECT_EQ(tok->encode("ba"), (Ids{2, 1}));
  EXPECT_EQ(tok->encode("axxb"), (Ids{1, 0, 2}));  // two unknown characters fused into one
  EXPECT_EQ(tok->encode("abc   <x>a", {.parse_special = true}), (Ids{7, 5, 1}));  // lstrip
  EXPECT_EQ(tok->encode("abc <x>a"), (Ids{7, 0, 1}));  // not parsed: < x > unknown, fused
  EXPECT_EQ(tok->encode("zz  abc"), (Ids{6, 7}));      // rstrip swallows the spaces
  EXPECT_EQ(tok->encode("azz"), (Ids{1, 0}));          // single_word: no match inside a word
  EXPECT_EQ(tok->encode("ab", {.add_special_tokens = true}), (Ids{5, 4}));
  EXPECT_TRUE(tok->is_special(5));
  EXPECT_FALSE(tok->is_special(6));
}

TEST_F(TinyJson, MalformedJsonNamesFileAndOffset) {
  const std::string path = write("malformed", "{\"model\": {\"vocab\": [1, 2,}");
  const std::string e = error_of(path);
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("byte"), std::string::npos) << e;
}

TEST_F(TinyJson, UnknownTypesNameTypeAndPath) {
  std::string body = kTiny;
  body.replace(body.find("\"Lowercase\""), 11, "\"Frobnicate\"");
  std::string e = error_of(write("unknown_norm", body));
  EXPECT_NE(e.find("Frobnicate"), std::string::npos) << e;
  EXPECT_NE(e.find("$.normalizer.type"), std::string::npos) << e;
  body = kTiny;
  body.replace(body.find("\"BPE\""), 5, "\"Unigram\"");
  e = error_of(write("unknown_model", body));
  EXPECT_NE(e.find("Unigram"), std::string::npos) << e;
  EXPECT_NE(e.find("$.model.type"), std::string::npos) << e;
  body = R"({"model": {"type": "BPE", "vocab": {"a": "one"}, "merges": []}})";
  e = error_of(write("bad_vocab", body));
  EXPECT_NE(e.find("$.model.vocab[\"a\"]"), std::string::npos) << e;
  body = R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
             "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "("}}]}})";
  e = error_of(write("bad_regex", body));
  EXPECT_NE(e.find("$.pre_tokenizer.pretokenizers[0]"), std::string::npos) << e;
}

}  // namespace
}  // namespace cairn::tok
