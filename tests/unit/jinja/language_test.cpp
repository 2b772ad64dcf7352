// Language-level cases from tools/templates/language_cases.mjs: small
// templates rendered by @huggingface/jinja (language_hf.json) and, for
// features that renderer lacks, by Python Jinja 2 (language_python.json).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "tokenizer/jinja/template.h"

namespace cairn::jinja {
namespace {

using Json = nlohmann::ordered_json;
const std::filesystem::path kFixtures =
    std::filesystem::path(CAIRN_SOURCE_DIR) / "tests/fixtures/templates";
constexpr std::time_t kFixedTime = 1785069296;  // 2026-07-26 12:34:56 UTC, as the generator pins it

Json load(const char* file) {
  std::ifstream in(kFixtures / file);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

void check_cases(const Json& cases) {
  ASSERT_GT(cases.size(), 5u);
  RenderOptions options;
  options.now = kFixedTime;
  for (const auto& c : cases) {
    std::string name = c["name"].get<std::string>();
    std::string output, error;
    try {
      output =
          Template::parse(c["template"].get<std::string>(), name).render(c["context"], options);
    } catch (const Error& e) {
      error = e.what();
    }
    if (c.contains("output")) {
      EXPECT_EQ(error, "") << name;
      EXPECT_EQ(output, c["output"].get<std::string>()) << name;
    } else {
      EXPECT_NE(error, "") << name << ": the reference failed with " << c["error"]
                           << ", cairn rendered " << Json(output).dump();
    }
  }
}

TEST(LanguageCases, MatchHuggingFaceJinja) {
  check_cases(load("language_hf.json"));
}
TEST(LanguageCases, MatchPythonJinjaForExtensions) {
  check_cases(load("language_python.json"));
}

}  // namespace
}  // namespace cairn::jinja
