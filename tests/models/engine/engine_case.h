// One model case of the engine tests (a folder, a tensor-parallel size, a KV format, a device)
// and the fixture that runs requests through a real Engine on it: the determinism tests take it
// at one rank and at several (determinism_test.cpp), on the CPU and, in the gpu label's binary,
// on a GPU with its pages in device memory; the tensor-parallel tests add their own checks
// (tp_engine_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/device.h"
#include "engine_test_util.h"
#include "model/tp/tensor_parallel_model.h"
#ifdef CAIRN_ENGINE_ON_GPU
#include <unistd.h>

#include <filesystem>

#include "cli/bench_model.h"
#endif

namespace cairn::test {

struct EngineCase {
  std::string name;
  std::string dir;
  int n_ranks = 1;
  int32_t kv_bits = 0;  // 8: affine pages after kv_quant_start positions
  DeviceKind device = DeviceKind::kCpu;
  bool fast_attention = false;  // DeviceBackend::set_fast_attention for the case's tests
};
inline void PrintTo(const EngineCase& c, std::ostream* os) {
  *os << c.name;
}

// Whether a device of this kind is present (a CUDA build without a GPU has none).
inline bool device_present(DeviceKind kind) {
  try {
    device_backend(kind).device();
    return true;
  } catch (const Error&) {
    return false;
  }
}

#ifdef CAIRN_ENGINE_ON_GPU
// A random-weight bf16 model of head_dim 64 (cairn bench's "tiny" shape), written on first use
// (case_model): its rows take the GPU attention's tensor cores, the fixtures' (head_dim 16 and
// 32) its CUDA cores.
inline const std::string kTinyHd64Dir =
    ::testing::TempDir() + "cairn-tiny-hd64-" + std::to_string(::getpid());
#endif

// The model of a folder split over n ranks (1: unsplit) and moved to a GPU or not, loaded once
// per binary. Split on a GPU, every rank runs on GPU 0 (the engine keeps its KV shards on one
// device), each on its own thread and streams.
inline Model& case_model(const std::string& dir, int n_ranks,
                         DeviceKind device = DeviceKind::kCpu) {
  static std::map<std::tuple<std::string, int, DeviceKind>, std::unique_ptr<Model>> models;
  auto& m = models[{dir, n_ranks, device}];
  if (!m) {
#ifdef CAIRN_ENGINE_ON_GPU
    if (dir == kTinyHd64Dir && !std::filesystem::exists(dir + "/config.json"))
      write_random_model(find_bench_shape("tiny"), DType::kBF16, dir, 7);
#endif
    m = n_ranks == 1 ? load_model(dir, {}) : tp::make_tensor_parallel(load_model(dir, {}), n_ranks);
    if (device != DeviceKind::kCpu && n_ranks == 1) m->to_device(device_backend(device).device());
    if (device != DeviceKind::kCpu && n_ranks > 1)
      dynamic_cast<tp::TensorParallelModel&>(*m).place_ranks(device, std::vector<int>(n_ranks));
  }
  return *m;
}

// Where the suites built again with CAIRN_ENGINE_ON_GPU (tests/gpu/models) run their engines:
// the GPU there, else the CPU. engine_device_missing: that build on a machine without one.
inline bool engine_device_missing() {
#ifdef CAIRN_ENGINE_ON_GPU
  return !device_present(DeviceKind::kCuda);
#else
  return false;
#endif
}

inline std::unique_ptr<Model> engine_model(const std::string& dir) {
  std::unique_ptr<Model> m = load_model(dir, {});
#ifdef CAIRN_ENGINE_ON_GPU
  m->to_device(device_backend(DeviceKind::kCuda).device());
#endif
  return m;
}

// The tensor-parallel cases: replicated KV heads (gemma2 at 4), one KV head (qwen2), 8-bit KV.
inline std::vector<EngineCase> tp_cases() {
  return {{"stories260K_tp2", kStoriesDir, 2},    {"stories260K_tp4", kStoriesDir, 4},
          {"llama_tp2", fixture_dir("llama"), 2}, {"gemma2_tp4", fixture_dir("gemma2"), 4},
          {"qwen2_tp2", fixture_dir("qwen2"), 2}, {"default_q8_tp2", kDefaultModelDir, 2, 8}};
}

class EngineCaseTest : public ::testing::TestWithParam<EngineCase> {
 protected:
  void SetUp() override {
    if (!device_present(GetParam().device)) GTEST_SKIP() << "no such device";
    device_backend(GetParam().device).set_fast_attention(GetParam().fast_attention);
  }
  void TearDown() override {
    if (device_present(GetParam().device))
      device_backend(GetParam().device).set_fast_attention(false);
  }
  // The case's model, or the same folder at n_ranks ranks.
  Model& model(int n_ranks = 0) {
    return case_model(GetParam().dir, n_ranks > 0 ? n_ranks : GetParam().n_ranks,
                      GetParam().device);
  }
  EngineOptions options(int64_t max_batch_tokens, int32_t max_seqs, int64_t cache_bytes = 0) {
    EngineOptions o;
    o.max_batch_tokens = max_batch_tokens;
    o.max_seqs = max_seqs;
    o.prefix_cache_bytes = cache_bytes;
    o.model_fingerprint = GetParam().dir;
    o.kv.bits = GetParam().kv_bits;
    o.kv.quant_start = GetParam().kv_bits > 0 ? 40 : 0;
    log.attach(o);
    return o;
  }
  int64_t vocab() { return model().config().vocab_size; }
  // The request under test: a sampled one, so tokens depend on (seed, step) too.
  Request target(int64_t len = 90) {
    return test_request(test_prompt(len, 7, vocab()), 12, 0.9f, 42);
  }
  Outcome alone(int64_t max_batch_tokens = 2048) {
    Engine e(model(), nullptr, options(max_batch_tokens, 1));
    return collect(e.submit(target()), log);
  }

  LogitsLog log;
};

}  // namespace cairn::test
