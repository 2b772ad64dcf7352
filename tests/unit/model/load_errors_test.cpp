// load_model on damaged copies of a fixture model: each error names the file
// and the tensor or field at fault. Also inspect_model's summary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "model/config.h"
#include "model/registry.h"
#include "temp_dir.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using test::expect_error;
using test::TempDir;
using test::write_bytes;

std::string fixture(const std::string& family) {
  return std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/" + family + "/bf16";
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A copy of the fixture `family` in `dir`, its config.json text edited by `edit`.
void copy_model(const TempDir& dir, const std::string& family,
                const std::function<void(std::string&)>& edit = {}) {
  for (const auto& e : fs::directory_iterator(fixture(family)))
    fs::copy_file(e.path(), fs::path(dir.str()) / e.path().filename());
  std::string cfg = read(dir.file("config.json"));
  if (edit) edit(cfg);
  write_bytes(dir.file("config.json"), cfg);
}

void replace(std::string& s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

TEST(LoadModel, FixtureLoadsAndSummarizes) {
  ModelConfig c = inspect_model(fixture("gemma2"));
  EXPECT_EQ(c.model_type, "gemma2");
  EXPECT_GT(c.weights.n_params, 100000);
  EXPECT_EQ(c.weights.bytes_by_dtype.size(), 1u);
  EXPECT_EQ(c.weights.bytes_by_dtype.at("BF16"), c.weights.n_params * 2);
  auto m = load_model(fixture("gemma2"), {});
  EXPECT_EQ(m->config().eos_token_ids, (std::vector<int32_t>{2, 3}));
}

TEST(LoadModel, WrongShapeNamesFileAndTensor) {
  TempDir dir;
  copy_model(dir, "mistral", [](std::string& s) {
    replace(s, "\"intermediate_size\": 128", "\"intermediate_size\": 100");
  });
  expect_error([&] { load_model(dir.str(), {}); },
               {"model.safetensors", "tensor 'model.layers.0.mlp.gate_proj.weight'",
                "shape [128, 64]", "expected [100, 64]"});
}

TEST(LoadModel, MissingTensorIsNamed) {
  TempDir dir;  // claims an untied head the file does not hold
  copy_model(dir, "mistral", [](std::string& s) {
    replace(s, "\"tie_word_embeddings\": true", "\"tie_word_embeddings\": false");
  });
  expect_error([&] { load_model(dir.str(), {}); }, {"tensor 'lm_head.weight' is missing"});
}

TEST(LoadModel, MissingConfigFieldIsNamed) {
  TempDir dir;
  copy_model(dir, "qwen3", [](std::string& s) { replace(s, "\"vocab_size\"", "\"vocab_sizes\""); });
  expect_error([&] { load_model(dir.str(), {}); },
               {"config.json", "field 'vocab_size' is missing"});
}

TEST(LoadModel, UnknownModelTypeListsSupported) {
  TempDir dir;
  copy_model(dir, "qwen3", [](std::string& s) { replace(s, "\"qwen3\"", "\"gpt_neox\""); });
  try {
    load_model(dir.str(), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    std::string msg = e.what();
    EXPECT_NE(msg.find("'gpt_neox'"), std::string::npos) << msg;
    for (const std::string& t : supported_model_types()) EXPECT_NE(msg.find(t), std::string::npos);
  }
}

TEST(LoadModel, TruncatedWeightsNameTheFile) {
  TempDir dir;
  copy_model(dir, "phi3");
  std::string w = read(dir.file("model.safetensors"));
  write_bytes(dir.file("model.safetensors"), w.substr(0, w.size() / 2));
  expect_error([&] { load_model(dir.str(), {}); }, {"model.safetensors", "outside"});
}

TEST(LoadModel, MissingPathAndStrayFile) {
  TempDir dir;
  expect_error([&] { load_model(dir.file("nothing"), {}); }, {"nothing", "no such"});
  write_bytes(dir.file("x.bin"), "not a model");
  expect_error([&] { load_model(dir.file("x.bin"), {}); }, {"x.bin", "not a llama2.c checkpoint"});
}

TEST(LoadModel, ProgressReachesTotal) {
  size_t done = 0, total = 0;
  LoadOptions o;
  o.progress = [&](size_t d, size_t t) { done = d, total = t; };
  load_model(fixture("llama"), o);
  EXPECT_GT(total, 0u);
  EXPECT_EQ(done, total);
}

}  // namespace
}  // namespace cairn
