#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "io/json_reader.h"
#include "io/safetensors.h"
#include "model/config.h"

namespace cairn::test {
namespace {

// An owned copy (the mapped file may go away with the SafetensorsFile).
Tensor copy_tensor(const io::SafetensorsFile& f, const std::string& name) {
  const io::SafetensorsEntry* e = f.find(name);
  if (e == nullptr) fail(ErrorCode::kBadFile, "{}: tensor '{}' is missing", f.path(), name);
  Tensor src = f.tensor(*e);
  Tensor dst = Tensor::empty(src.shape(), src.dtype());
  std::memcpy(dst.raw(), src.raw(), src.nbytes());
  return dst;
}

float max_abs(const Tensor& t) {
  float m = 0.0f;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::abs(t.data<float>()[i]));
  return m;
}

}  // namespace

Reference load_reference(const std::string& folder) {
  Reference r;
  std::string jpath = folder + "/reference.json";
  nlohmann::json j = io::read_json_file(jpath);
  io::JsonFields f(j, jpath);
  for (int64_t id : f.opt_int_list("prompt_ids")) r.prompt_ids.push_back(static_cast<int32_t>(id));
  for (int64_t id : f.opt_int_list("step_ids")) r.step_ids.push_back(static_cast<int32_t>(id));
  auto st = io::SafetensorsFile::open(folder + "/reference.safetensors");
  r.prompt_logits = copy_tensor(*st, "prompt_logits");
  r.step_logits = copy_tensor(*st, "step_logits");
  r.max_abs_logit = std::max(max_abs(r.prompt_logits), max_abs(r.step_logits));
  return r;
}

std::vector<float> run_span(Model& m, KvView& kv, int32_t slot, const std::vector<int32_t>& ids,
                            int64_t begin, int64_t end) {
  ForwardBatch b;
  b.tokens.assign(ids.begin() + begin, ids.begin() + end);
  for (int64_t p = begin; p < end; ++p) b.positions.push_back(static_cast<int32_t>(p));
  b.spans.push_back({slot, 0, end - begin, true});
  int64_t vocab = m.config().vocab_size;
  Tensor logits = Tensor::empty({1, vocab}, DType::kF32);
  m.forward(b, kv, logits);
  return std::vector<float>(logits.data<float>(), logits.data<float>() + vocab);
}

float max_abs_diff(const std::vector<float>& a, const Tensor& ref, int64_t row) {
  const float* r = ref.data<float>() + row * ref.dim(1);
  float m = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - r[i]));
  return m;
}

int32_t argmax(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace cairn::test
