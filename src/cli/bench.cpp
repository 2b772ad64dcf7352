// cairn bench: the machine's limits (memory bandwidth, f32 FMA rate), then
// single-sequence prefill and decode on random-weight models of real shapes,
// each figure printed against the limit it chases:
//   decode  — weight (+ KV) bytes read per token × tokens/s, against bandwidth;
//   prefill — 2 × matmul parameters × tokens per second, against the FMA rate.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "backend/cpu/machine_limits.h"
#include "backend/device.h"
#include "backend/device_limits.h"
#include "cli/bench_device.h"
#include "cli/bench_host_restore.h"
#include "cli/bench_load.h"
#include "cli/bench_model.h"
#include "cli/bench_restore.h"
#include "cli/blas_rate.h"
#include "cli/device_flag.h"
#include "cli/loaded_model.h"
#include "cli/model_path.h"
#include "cli/verbs.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kv/contiguous_cache.h"
#include "model/config.h"
#include "model/registry.h"

namespace cairn {
namespace {

// The CPU bench's shape when --shape is not given; --device cuda then runs its own shapes.
constexpr std::string_view kDefaultCpuShape = "0.5b";

struct BenchFlags {
  std::vector<std::string> shapes = {std::string(kDefaultCpuShape)};
  std::vector<std::string> dtypes = {"bf16", "f32"};
  int32_t prompt_tokens = 128;
  int32_t decode_tokens = 32;
  std::string work_dir = "/tmp/cairn-bench";
  int threads = 0;
  bool load = false;  // --load: the engine under concurrent requests
  std::string model;  // --load on this model instead of a random-weight shape
  LoadFlags load_flags;
  EngineFlags engine;
  std::string device = "cpu";
  GraphFlags graphs;
  DeviceBenchFlags gpu;
  bool ssd_restore = false;   // --ssd-restore: a long prompt restored from the SSD tier
  bool host_restore = false;  // --host-restore: a long prompt copied back from the host tier
  bool prompt_tokens_given = false;
  RestoreBenchFlags restore;
};

struct Limits {
  double bandwidth_gbs;
  double fma_gflops;
};

// "= x% of <what>" for a rate against a limit, or nothing without the limit.
std::string share_of(double rate, double limit, const char* what) {
  return limit > 0 ? fmt::format(" = {:5.1f}% of {}", 100.0 * rate / limit, what) : std::string();
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs a forward over tokens [begin, begin + n) of one sequence; returns seconds.
double timed_forward(Model& model, ContiguousKvCache& cache, int32_t begin, int32_t n,
                     Tensor& logits) {
  ForwardBatch batch;
  for (int32_t i = 0; i < n; ++i) {
    batch.tokens.push_back((begin + i) * 7919 % static_cast<int32_t>(model.config().vocab_size));
    batch.positions.push_back(begin + i);
  }
  batch.spans.push_back({0, 0, n, true});
  double t0 = now_seconds();
  model.forward(batch, cache, logits);
  return now_seconds() - t0;
}

std::string model_dir(const BenchFlags& f, const BenchShape& s, DType dtype) {
  std::string dir = f.work_dir + "/" + s.name + "-" + std::string(dtype_name(dtype));
  if (!std::filesystem::exists(dir + "/model.safetensors")) {
    fmt::print(stderr, "writing random {} {} weights to {}\n", s.name, dtype_name(dtype), dir);
    write_random_model(s, dtype, dir, 1234);
  }
  return dir;
}

void bench_one(const BenchFlags& f, const BenchShape& s, DType dtype, const Limits& lim) {
  std::unique_ptr<Model> model = load_model(model_dir(f, s, dtype), {});
  const ModelConfig& cfg = model->config();
  constexpr int32_t kProfiledSteps = 4;  // --profile-ops: after the timed ones
  int32_t total = f.prompt_tokens + f.decode_tokens + kProfiledSteps;
  ContiguousKvCache cache(cfg, 1, total);
  Tensor logits = Tensor::empty({1, cfg.vocab_size}, DType::kF32);
  double prefill_s = timed_forward(*model, cache, 0, f.prompt_tokens, logits);
  std::vector<double> steps;
  for (int32_t i = 0; i < f.decode_tokens; ++i)
    steps.push_back(timed_forward(*model, cache, f.prompt_tokens + i, 1, logits));
  if (f.gpu.profile_ops) {
    DeviceBackend& dev = device_backend(DeviceKind::kCpu);
    dev.start_op_profile();
    for (int32_t i = 0; i < kProfiledSteps; ++i)
      timed_forward(*model, cache, f.prompt_tokens + f.decode_tokens + i, 1, logits);
    fmt::print("ops of {} decode steps, {} {}:\n{}", kProfiledSteps, s.name, dtype_name(dtype),
               dev.stop_op_profile());
  }
  std::sort(steps.begin(), steps.end());
  double step_s = steps[steps.size() / 2];

  double weight_bytes = static_cast<double>(s.n_params()) * dtype_bits(dtype) / 8.0;
  double kv_bytes = 2.0 * cfg.n_layers * cfg.n_kv_heads * cfg.head_dim * 4.0 *
                    (f.prompt_tokens + f.decode_tokens / 2);
  double decode_gbs = (weight_bytes + kv_bytes) / step_s / 1e9;
  double matmul_params = static_cast<double>(s.n_params() - s.vocab * s.hidden);
  double prefill_gflops = 2.0 * matmul_params * f.prompt_tokens / prefill_s / 1e9;
  // The achievable rate at this prefill's widest product (gate|up: tokens × ffn × hidden).
  const double blas = measure_blas_sgemm_gflops(f.prompt_tokens, s.ffn, s.hidden,
                                                static_cast<int>(ThreadPool::global().n_threads()));
  fmt::print(
      "{:>5} {:>5} {:>7.2f}B | decode {:7.2f} tok/s {:6.2f} GB/s = {:5.1f}% of bandwidth"
      " | prefill {:8.1f} tok/s {:7.1f} GFLOP/s = {:5.1f}% of FMA peak{}\n",
      s.name, dtype_name(dtype), s.n_params() / 1e9, 1.0 / step_s, decode_gbs,
      100.0 * decode_gbs / lim.bandwidth_gbs, f.prompt_tokens / prefill_s, prefill_gflops,
      100.0 * prefill_gflops / lim.fma_gflops,
      share_of(prefill_gflops, blas, fmt::format("OpenBLAS sgemm {:.1f}", blas).c_str()));
}

// Bytes of the weight files of a model folder or file (what one decode step streams).
double weight_file_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) return static_cast<double>(fs::file_size(path));
  double bytes = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(path)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".safetensors" || ext == ".bin" || ext == ".gguf")
      bytes += static_cast<double>(e.file_size());
  }
  return bytes;
}

// The model --load and --ssd-restore run: --model, else the first random-weight shape.
std::string engine_bench_model(const BenchFlags& f) {
  std::string path = f.model;
  if (path.empty()) {
    DType dtype;
    if (!dtype_from_name(f.dtypes.front(), &dtype) || !dtype_is_float(dtype))
      fail(ErrorCode::kInvalidArgument, "--dtype: '{}' is not one of f32, bf16, f16",
           f.dtypes.front());
    path = model_dir(f, find_bench_shape(f.shapes.front()), dtype);
  }
  return resolve_model_path(path);
}

// The engine's model for --load: --model (or the CPU bench's random shape) placed
// on --device; on a GPU without --model, a real shape with random weights made
// there (--shape, default llama-3.1-8b). weight_bytes: what one decode step streams.
std::unique_ptr<Model> load_bench_model(const BenchFlags& f, double& weight_bytes) {
  const Device d = f.engine.tensor_parallel > 1 ? Device::cpu() : resolve_device(f.device);
  if (f.model.empty() && d.kind != DeviceKind::kCpu) {
    apply_attention_precision(f.graphs, d.kind);
    const bool named = f.shapes.size() == 1 && f.shapes.front() != kDefaultCpuShape;
    std::unique_ptr<Model> m = make_device_bench_model(named ? f.shapes.front() : "llama-3.1-8b",
                                                       f.work_dir, d, f.gpu.layers);
    weight_bytes = static_cast<double>(bench_weight_bytes(m->config()));
    m->set_step_graphs(f.graphs.max_batch());
    return m;
  }
  std::unique_ptr<Model> m = load_model(engine_bench_model(f), {});  // ids only: no tokenizer
  place_model(m, f.device, f.engine.tensor_parallel, f.graphs);
  weight_bytes = weight_file_bytes(m->config().path);
  return m;
}

// On the device --device names (load_bench_model).
void run_ssd_restore(const BenchFlags& f) {
  double weights = 0;
  std::unique_ptr<Model> model = load_bench_model(f, weights);
  RestoreBenchFlags r = f.restore;
  if (f.prompt_tokens_given) r.prompt_tokens = f.prompt_tokens;
  if (r.dir.empty()) r.dir = f.work_dir + "/ssd-restore";
  fmt::print("model {} ({} layers, {} KV heads × {})\n", model->config().path,
             model->config().n_layers, model->config().n_kv_heads, model->config().head_dim);
  run_restore_bench(*model, engine_options(f.engine, model->config().path, model->device()), r);
}

// On the device --device names, the model of --load.
void run_host_restore(const BenchFlags& f) {
  double weights = 0;
  std::unique_ptr<Model> model = load_bench_model(f, weights);
  const int64_t n = f.prompt_tokens_given ? f.prompt_tokens : 4096;
  run_host_restore_bench(*model, engine_options(f.engine, model->config().path, model->device()),
                         n);
}

// On the device --device names (the CPU by default); bandwidth is that device's.
void run_load_bench(const BenchFlags& f) {
  double weights = 0;
  std::unique_ptr<Model> model = load_bench_model(f, weights);
  const Device d = model->device();
  const double bandwidth = d.kind == DeviceKind::kCpu ? ops::cpu::measure_memory_bandwidth_gbs()
                                                      : measure_device_limits(d).bandwidth_gbs;
  fmt::print("{} memory bandwidth (copy, read + write): {:.2f} GB/s\n",
             d.kind == DeviceKind::kCpu ? "host" : "device", bandwidth);
  if (f.engine.tensor_parallel > 1)
    fmt::print("tensor parallel: {} ranks ({})\n", f.engine.tensor_parallel,
               d.kind == DeviceKind::kCpu ? "CPU threads" : "one GPU each");
  print_load_bench(*model, f.load_flags, engine_options(f.engine, model->config().path, d), weights,
                   bandwidth);
}

void run_bench(const BenchFlags& f) {
  set_threads(f.threads);
  if (f.ssd_restore) return run_ssd_restore(f);
  if (f.host_restore) return run_host_restore(f);
  if (f.load) return run_load_bench(f);
  if (Device d = resolve_device(f.device); d.kind != DeviceKind::kCpu) {
    DeviceBenchFlags g = f.gpu;
    if (f.shapes.size() != 1 || f.shapes.front() != kDefaultCpuShape) g.shapes = f.shapes;
    g.work_dir = f.work_dir;
    g.max_graph_batch = f.graphs.max_batch();
    g.kv_group_size = f.engine.kv.kv.group_size;  // --kv-group-size: the long decode's 8/4-bit KV
    g.tensor_parallel = f.engine.tensor_parallel;
    apply_attention_precision(f.graphs, d.kind);
    return run_device_bench(g, d);
  }
  Limits lim{ops::cpu::measure_memory_bandwidth_gbs(), ops::cpu::measure_f32_gemm_gflops()};
  fmt::print("memory bandwidth (copy, read + write): {:.2f} GB/s\n", lim.bandwidth_gbs);
  fmt::print("f32 FMA peak (all threads):            {:.1f} GFLOP/s\n", lim.fma_gflops);
  fmt::print("prompt {} tokens, decode {} tokens (median step), one sequence\n", f.prompt_tokens,
             f.decode_tokens);
  for (const std::string& name : f.shapes) {
    for (const std::string& dt : f.dtypes) {
      DType dtype;
      if (!dtype_from_name(dt, &dtype) || !dtype_is_float(dtype))
        fail(ErrorCode::kInvalidArgument, "--dtype: '{}' is not one of f32, bf16, f16", dt);
      bench_one(f, find_bench_shape(name), dtype, lim);
    }
  }
}

void add_load_flags(CLI::App& cmd, BenchFlags& f) {
  LoadFlags& l = f.load_flags;
  cmd.add_flag("--load", f.load, "run the engine under concurrent synthetic requests instead");
  cmd.add_option("--model,-m", f.model,
                 "--load: this model instead of a random-weight --shape (on a GPU: llama-3.1-8b "
                 "or --shape, weights made there)");
  cmd.add_option("--requests", l.requests, "--load: requests per configuration")
      ->capture_default_str();
  cmd.add_option("--concurrency", l.concurrency, "--load: clients at once, e.g. 1,16")
      ->delimiter(',')
      ->capture_default_str();
  cmd.add_option("--request-tokens", l.prompt_tokens,
                 "--load: each prompt's own tokens, N or MIN:MAX")
      ->capture_default_str();
  cmd.add_option("--output-tokens", l.output_tokens, "--load: tokens per request, N or MIN:MAX")
      ->capture_default_str();
  cmd.add_option("--shared-prefix-tokens", l.shared_prefix_tokens,
                 "--load: length of the prefix shared by some prompts")
      ->capture_default_str();
  cmd.add_option("--shared-prefix-fraction", l.shared_fraction,
                 "--load: fraction of prompts starting with the shared prefix")
      ->capture_default_str();
  cmd.add_option("--prefix-cache", l.prefix_cache, "--load: on, off or both")
      ->capture_default_str();
  cmd.add_flag("--ssd-restore", f.ssd_restore,
               "a long prompt (--prompt-tokens, default 4096) restored from the SSD tier after a "
               "restart: TTFT against cold prefill, MB/s against the disk's O_DIRECT reads");
  cmd.add_flag("--host-restore", f.host_restore,
               "a long prompt (--prompt-tokens, default 4096) evicted to the host-RAM tier and "
               "copied back: TTFT against cold prefill, GB/s against page-locked copies");
  cmd.add_option("--ssd-dir", f.restore.dir,
                 "--ssd-restore: the SSD tier's folder, on the disk to measure (emptied first; "
                 "default WORK_DIR/ssd-restore)");
  cmd.add_option("--restore-threads", f.restore.restore_threads, "--ssd-restore: reads in flight")
      ->capture_default_str();
  cmd.add_option("--restore-layer-ranges", f.restore.layer_ranges,
                 "--ssd-restore: layer ranges an overlapped restore reads in turn (0: from the "
                 "page size, 1 to 4)")
      ->capture_default_str();
  add_engine_flags(cmd, f.engine);
}

}  // namespace

void register_bench(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure the machine, then decode and prefill speed");
  cmd->add_option("--shape", f->shapes, "random-weight shapes: tiny, 0.5b, 1.5b")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--dtype", f->dtypes, "weight dtypes: f32, bf16, f16")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--prompt-tokens", f->prompt_tokens, "prefill length")
      ->capture_default_str()
      ->each([f](const std::string&) { f->prompt_tokens_given = true; });
  cmd->add_option("--decode-tokens", f->decode_tokens, "decode steps timed")->capture_default_str();
  cmd->add_option("--work-dir", f->work_dir, "where random weights are written and reused")
      ->capture_default_str();
  cmd->add_option("--threads,-t", f->threads, "CPU threads (0 = all cores)")->capture_default_str();
  add_load_flags(*cmd, *f);
  cmd->add_option("--device", f->device,
                  "cpu, or cuda: random bf16 weights of real shapes on the GPU (shapes " +
                      fmt::format("{}", fmt::join(device_bench_shapes(), ", ")) + ")")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
      ->capture_default_str();
  add_graph_flags(*cmd, f->graphs);
  cmd->add_option("--batch-sizes", f->gpu.batches, "--device cuda: decode batch sizes")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--prefill-tokens", f->gpu.prefill_tokens, "--device cuda: long-prompt length")
      ->capture_default_str();
  cmd->add_option("--long-context", f->gpu.long_context,
                  "--device cuda: KV positions of the long-context decode")
      ->capture_default_str();
  cmd->add_option("--layers", f->gpu.layers,
                  "--device cuda: each shape's first N layers only (0: all; e.g. a llama-3.1-70b "
                  "shape's layers on one GPU)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--rank-devices", f->gpu.rank_devices,
                  "--device cuda --tensor-parallel N: each rank's GPU (default 0 ... N-1; a GPU "
                  "named twice holds two ranks, to time what the split costs on one GPU)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--contiguous-kv", f->gpu.contiguous_kv,
                "--device cuda: hold the KV in one contiguous buffer a sequence, filled with "
                "random values (8-bit and 4-bit: in the affine row format), instead of the "
                "engine's paged state (pages of 32 tokens, as serve and generate hold it, "
                "filled by prefills)");
  cmd->add_flag(
      "--profile-ops", f->gpu.profile_ops,
      "time every op of a few more decode steps (and of one more prefill) on the host and "
      "the device and print a table per figure (the figures are timed without it)");
  cmd->callback([f] { run_bench(*f); });
}

}  // namespace cairn
