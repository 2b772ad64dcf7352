// f16 weights: a fixture's f32 weights rewritten as f16 must load and run in
// that dtype and stay within the reduced-precision bound of transformers' f32
// logits. Greedy tokens are not compared: the reference ran the f32 weights, and
// some of its steps' top two logits are closer than f16 rounding.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "model/config.h"
#include "model/decoder.h"
#include "model/registry.h"
#include "reference.h"

namespace cairn::test {
namespace {

namespace fs = std::filesystem;

// Writes `src`'s model.safetensors with every tensor converted to f16 into `dst`.
void write_f16_copy(const std::string& src, const std::string& dst) {
  fs::create_directories(dst);
  fs::copy_file(src + "/config.json", dst + "/config.json");
  auto in = io::SafetensorsFile::open(src + "/model.safetensors");
  std::vector<cairn::SafetensorsEntry> out;
  for (const io::SafetensorsEntry& e : in->entries()) {
    Tensor t = in->tensor(e);
    std::vector<int64_t> shape;
    for (int i = 0; i < e.shape.ndim(); ++i) shape.push_back(e.shape[i]);
    out.push_back({e.name, DType::kF16, shape, [t](uint8_t* dst_bytes, size_t n_bytes) {
                     auto* h = reinterpret_cast<uint16_t*>(dst_bytes);
                     for (size_t i = 0; i < n_bytes / 2; ++i) h[i] = f32_to_f16(t.data<float>()[i]);
                   }});
  }
  write_safetensors(dst + "/model.safetensors", out);
}

TEST(F16Weights, QwenFixtureRunsInF16) {
  std::string src = std::string(CAIRN_SOURCE_DIR) + "/tests/fixtures/models/qwen2/f32";
  std::string dst = (fs::temp_directory_path() / "cairn_f16_qwen2").string();
  fs::remove_all(dst);
  write_f16_copy(src, dst);
  Reference ref = load_reference(src);
  auto model = load_model(dst, {});
  auto* dec = dynamic_cast<DecoderModel*>(model.get());
  ASSERT_NE(dec, nullptr);
  EXPECT_EQ(dec->weights().layers[0].attn.wq.dtype(), DType::kF16);  // kept as stored
  ContiguousKvCache kv(model->config(), 1, 128);
  std::vector<int32_t> ids = ref.prompt_ids;
  int64_t n = static_cast<int64_t>(ids.size());
  std::vector<float> logits = run_span(*model, kv, 0, ids, 0, n);
  float bound = 2e-2f * ref.max_abs_logit;
  EXPECT_LE(max_abs_diff(logits, ref.prompt_logits, n - 1), bound);
  for (size_t s = 0; s < ref.step_ids.size(); ++s) {
    if (s > 0) {
      ids.push_back(ref.step_ids[s - 1]);
      logits = run_span(*model, kv, 0, ids, n + static_cast<int64_t>(s) - 1,
                        n + static_cast<int64_t>(s));
    }
    EXPECT_LE(max_abs_diff(logits, ref.step_logits, static_cast<int64_t>(s)), bound)
        << "step " << s;
  }
  fs::remove_all(dst);
}

}  // namespace
}  // namespace cairn::test
