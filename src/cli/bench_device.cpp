#include "cli/bench_device.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "backend/device.h"
#include "backend/device_limits.h"
#include "backend/on_device.h"
#include "backend/ops.h"
#include "core/error.h"
#include "core/median.h"
#include "kv/device_cache.h"
#include "kv/paged_kv.h"
#include "model/decoder.h"
#include "model/device_weights.h"
#include "model/tp/sharded_kv.h"
#include "model/tp/tensor_parallel_model.h"

namespace cairn {
namespace {

// A Llama-3.1 config.json of these sizes (8 KV heads; the family's vocabulary, norms and RoPE).
std::string llama31(int hidden, int layers, int heads, int intermediate) {
  return fmt::format(
      R"({{"model_type":"llama","hidden_size":{},"num_hidden_layers":{},"num_attention_heads":{},
"num_key_value_heads":8,"intermediate_size":{},"vocab_size":128256,"rms_norm_eps":1e-5,
"max_position_embeddings":131072,"rope_theta":500000.0,"hidden_act":"silu","torch_dtype":"bfloat16",
"tie_word_embeddings":false,"rope_scaling":{{"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,
"high_freq_factor":4.0,"original_max_position_embeddings":8192}}}})",
      hidden, layers, heads, intermediate);
}

// config.json of each shape: the public configs' architecture fields.
const std::map<std::string, std::string>& shape_configs() {
  static const std::map<std::string, std::string> m = {
      {"llama-3.1-8b", llama31(4096, 32, 32, 14336)},
      {"llama-3.1-70b", llama31(8192, 80, 64, 28672)},
      {"qwen3-8b",
       R"({"model_type":"qwen3","hidden_size":4096,"num_hidden_layers":36,"num_attention_heads":32,
"num_key_value_heads":8,"head_dim":128,"intermediate_size":12288,"vocab_size":151936,
"rms_norm_eps":1e-6,"max_position_embeddings":40960,"rope_theta":1000000.0,"hidden_act":"silu",
"torch_dtype":"bfloat16","tie_word_embeddings":false})"},
      {"gemma-3-12b",
       R"({"model_type":"gemma3_text","hidden_size":3840,"num_hidden_layers":48,"num_attention_heads":16,
"num_key_value_heads":8,"head_dim":256,"intermediate_size":15360,"vocab_size":262208,
"rms_norm_eps":1e-6,"max_position_embeddings":131072,"rope_theta":1000000.0,
"rope_local_base_freq":10000.0,"sliding_window":1024,"sliding_window_pattern":6,
"query_pre_attn_scalar":256,"hidden_activation":"gelu_pytorch_tanh","torch_dtype":"bfloat16",
"tie_word_embeddings":true,"rope_scaling":{"rope_type":"linear","factor":8.0}})"},
  };
  return m;
}

using Clock = std::chrono::steady_clock;

}  // namespace

ModelConfig device_bench_config(const std::string& name, const std::string& work_dir,
                                int32_t layers) {
  auto it = shape_configs().find(name);
  if (it == shape_configs().end())
    fail(ErrorCode::kInvalidArgument, "unknown shape '{}'; known: {}", name,
         fmt::join(device_bench_shapes(), ", "));
  if (layers < 0) fail(ErrorCode::kInvalidArgument, "--layers must be at least 0, got {}", layers);
  std::string json = it->second;
  if (layers > 0) {  // the first `layers` of the shape's, as its config.json would say
    const std::string key = "\"num_hidden_layers\":";
    const size_t at = json.find(key) + key.size(), end = json.find(',', at);
    const int32_t all = std::stoi(json.substr(at, end - at));
    json = fmt::format("{}{}{}", json.substr(0, at), std::min(layers, all), json.substr(end));
  }
  const std::string dir = layers > 0 ? fmt::format("{}/{}-{}", work_dir, name, layers)
                                     : fmt::format("{}/{}", work_dir, name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << json;
  return parse_hf_config(dir);
}

std::unique_ptr<Model> make_device_bench_model(const std::string& name, const std::string& work_dir,
                                               Device device, int32_t layers) {
  const ModelConfig c = device_bench_config(name, work_dir, layers);
  const bool gemma = c.model_type == "gemma3_text";
  DecoderWeights w = random_weights(c, DType::kBF16, device, gemma || c.model_type == "qwen3", 7);
  DecoderOptions o = default_decoder_options(c);
  if (gemma) {
    o.sandwich_norms = true;
    o.embed_scale = std::sqrt(static_cast<float>(c.hidden_size));
  }
  return std::make_unique<DecoderModel>(c, std::move(w), std::move(o));
}

namespace {
// Weights every token multiplies in the layers: the attention and MLP projections.
int64_t layer_weights(const ModelConfig& c) {
  const int64_t h = c.hidden_size, hd = c.head_dim;
  const int64_t layer = h * hd * (2 * c.n_heads + 2 * c.n_kv_heads) + 3 * h * c.intermediate_size;
  return layer * c.n_layers;
}
}  // namespace

int64_t bench_weight_bytes(const ModelConfig& c) {
  // bf16; the input embedding is one row a token (noise), tied to the LM head or not
  return 2 * (layer_weights(c) + c.vocab_size * c.hidden_size);
}

namespace {

// Bytes of K and V one position holds over all layers: bf16, or rows of format q.
int64_t kv_bytes_per_token(const ModelConfig& c, const ops::KvRowQuant& q = {}) {
  const int64_t row_bytes = q.enabled() ? q.row_bytes(c.head_dim) : 2 * c.head_dim;
  return 2 * c.n_layers * c.n_kv_heads * row_bytes;
}

// One step of `n_seqs` sequences, `n` tokens each, starting at position `pos`.
// Returns seconds, until the step's greedy tokens reach the host.
double step(Model& m, KvView& kv, int32_t n_seqs, int32_t first_slot, int32_t pos, int32_t n) {
  ForwardBatch b;
  for (int32_t s = 0; s < n_seqs; ++s) {
    b.spans.push_back({first_slot + s, static_cast<int64_t>(s) * n, n, true});
    for (int32_t i = 0; i < n; ++i) {
      b.tokens.push_back((pos + i + 31 * s) * 7919 % static_cast<int32_t>(m.config().vocab_size));
      b.positions.push_back(pos + i);
    }
  }
  // Greedy on the device, as the engine samples: only the ids come back.
  const auto rows = static_cast<int64_t>(b.logit_rows().size());
  Tensor logits = empty_on(m.device(), {rows, m.config().vocab_size}, DType::kF32);
  Tensor ids = Tensor::empty({rows}, DType::kI32), lps = Tensor::empty({rows}, DType::kF32);
  ops::SampleRow row;
  row.temperature = 0.0f, row.n_top = -1;
  const std::vector<ops::SampleRow> greedy(static_cast<size_t>(rows), row);
  auto t0 = Clock::now();
  m.forward(b, kv, logits);
  ops::sample_rows(logits, greedy, {&ids, &lps, nullptr, nullptr});
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::vector<std::string> device_bench_shapes() {
  std::vector<std::string> names;
  for (const auto& [name, json] : shape_configs()) names.push_back(name);
  return names;
}

namespace {

struct Ctx {
  const DeviceBenchFlags& f;
  Device device;
  DeviceLimits lim;
};

// The bench's KV of n_slots sequences up to n_tokens each, bf16 or the affine rows q: a
// DeviceKvCache, or one per KV shard of a split model (a ShardedKvView).
std::unique_ptr<KvView> bench_kv(const Model& m, int32_t n_slots, int32_t n_tokens,
                                 const ops::KvRowQuant& q = {}) {
  const std::vector<Device> d = m.kv_shard_devices();  // each rank's shard on its GPU
  std::vector<ModelConfig> shards = m.kv_shard_configs();
  auto one = [&](size_t r) {
    const OnDevice on(d[r]);
    return std::make_unique<DeviceKvCache>(shards[r], d[r], DType::kBF16, n_slots, n_tokens, q);
  };
  if (shards.size() == 1) return one(0);
  std::vector<std::unique_ptr<KvView>> views;
  for (size_t r = 0; r < shards.size(); ++r) views.push_back(one(r));
  return std::make_unique<tp::ShardedKvView>(std::move(views));
}

// The engine's paged KV state (pages of kDefaultPageTokens on the model's KV device, a pool
// for n_slots sequences of n_tokens positions), the default: what serve and generate attend.
// With q: every layer in q's affine rows from the first append (quant_start 0), as
// `--kv-bits` with `--kv-quant-start 0` gives.
std::unique_ptr<KvView> bench_paged_kv(const Model& m, int32_t n_slots, int32_t n_tokens,
                                       const ops::KvRowQuant& q = {}) {
  PagedKvOptions o;
  place_kv(m, o);
  if (q.enabled()) o.quant = uniform_scheme(m.config(), q.bits, q.group_size, 0);
  const int64_t pages = (n_tokens + o.page_tokens - 1) / o.page_tokens + 1;
  o.budget_bytes = n_slots * pages * o.page_tokens * kv_bytes_per_token(m.config()) + (64 << 20);
  auto state = std::make_unique<PagedKvState>(m.kv_shard_configs(), o);
  if (state->n_shards() == 1) return state;
  std::vector<KvView*> shards;  // a split model reads its ranks' shards (as the engine does)
  for (int r = 0; r < state->n_shards(); ++r) shards.push_back(&state->shard(r));
  return std::make_unique<tp::ShardedKvView>(std::move(state), std::move(shards));
}

// The KV the bench attends: the paged state's, or bench_kv's (--contiguous-kv).
std::unique_ptr<KvView> bench_view(const Ctx& x, const Model& m, int32_t n_slots, int32_t n_tokens,
                                   const ops::KvRowQuant& q = {}) {
  if (!x.f.contiguous_kv) return bench_paged_kv(m, n_slots, n_tokens, q);
  return bench_kv(m, n_slots, n_tokens, q);
}

// n random positions in slot `slot` of every cache of bench_kv's view.
void fill_random(KvView& kv, int32_t slot, int32_t n, uint64_t seed) {
  auto* sharded = dynamic_cast<tp::ShardedKvView*>(&kv);
  for (int r = 0; r < (sharded ? sharded->n_shards() : 1); ++r) {
    auto& c = dynamic_cast<DeviceKvCache&>(sharded ? sharded->shard(r) : kv);
    const OnDevice on(c.device());
    c.fill_random(slot, n, seed + r);
  }
}

// Median seconds of one decode step of n_seqs sequences over ctx positions of
// random KV each (DeviceKvCache::fill_random: the values do not change the time),
// the KV in bf16 or in the affine rows q.
double decode_seconds(const Ctx& x, Model& m, int32_t n_seqs, int32_t ctx,
                      const ops::KvRowQuant& q) {
  std::unique_ptr<KvView> cache = bench_view(x, m, n_seqs, ctx + x.f.decode_tokens + 6, q);
  KvView& kv = *cache;
  if (!x.f.contiguous_kv) {
    // Paged: the context computed by prefills of at most ~8k tokens (its values do not change
    // the time; the paged state has no random fill).
    const int32_t group = std::max(1, 8192 / std::max(ctx, 1));
    for (int32_t s = 0; s < n_seqs && ctx > 0; s += group)
      step(m, kv, std::min(group, n_seqs - s), s, 0, ctx);
  } else {
    for (int32_t s = 0; s < n_seqs; ++s) fill_random(kv, s, ctx, 11 + static_cast<uint64_t>(s));
  }
  step(m, kv, n_seqs, 0, ctx, 1);  // warm-up
  std::vector<double> steps;
  for (int32_t i = 1; i <= x.f.decode_tokens; ++i)
    steps.push_back(step(m, kv, n_seqs, 0, ctx + i, 1));
  if (x.f.profile_ops) {  // more steps, timed op by op: the figures above stay untouched
    DeviceBackend& dev = device_backend(x.device.kind);
    dev.start_op_profile();
    for (int32_t i = 1; i <= 4; ++i) step(m, kv, n_seqs, 0, ctx + x.f.decode_tokens + i, 1);
    fmt::print("  ops of 4 decode steps, batch {}, context {}:\n{}", n_seqs, ctx,
               dev.stop_op_profile());
  }
  return median(steps);
}

// Decode of n_seqs sequences at context ctx, KV in bf16 or in the affine rows q,
// against the weights+KV roofline (KV bytes from the rows' size); returns tok/s.
double bench_decode(const Ctx& x, Model& m, int32_t n_seqs, int32_t ctx,
                    const ops::KvRowQuant& q = {}) {
  const ModelConfig& c = m.config();
  const double s = decode_seconds(x, m, n_seqs, ctx, q);
  const double bytes = static_cast<double>(bench_weight_bytes(c)) +
                       static_cast<double>(n_seqs) * (ctx + x.f.decode_tokens / 2.0) *
                           static_cast<double>(kv_bytes_per_token(c, q));
  const double roofline = n_seqs / (bytes / (x.lim.bandwidth_gbs * 1e9));
  const std::string kv = q.enabled() ? fmt::format(", {}-bit KV g{}", q.bits, q.group_size) : "";
  fmt::print(
      "  decode  batch {:>4}, context {:>6}{}: {:9.1f} tok/s ({:6.2f} ms/step) = {:5.1f}% "
      "of the weights+KV roofline ({:.0f} tok/s)\n",
      n_seqs, ctx, kv, n_seqs / s, s * 1e3, 100.0 * n_seqs / s / roofline, roofline);
  return n_seqs / s;
}

double bench_prefill(const Ctx& x, Model& m) {
  const ModelConfig& c = m.config();
  const int32_t n = x.f.prefill_tokens;
  step(m, *bench_view(x, m, 1, 1024), 1, 0, 0, 1024);  // warm-up
  std::vector<double> runs;
  for (int r = 0; r < 3; ++r) runs.push_back(step(m, *bench_view(x, m, 1, n), 1, 0, 0, n));
  const double s = median(runs);
  if (x.f.profile_ops) {  // one more prefill, timed op by op
    DeviceBackend& dev = device_backend(x.device.kind);
    dev.start_op_profile();
    step(m, *bench_view(x, m, 1, n), 1, 0, 0, n);
    fmt::print("  ops of a prefill of {} tokens:\n{}", n, dev.stop_op_profile());
  }
  const double hd = static_cast<double>(c.head_dim);
  // the layers' products of every token; the LM head runs for the last token only (noise)
  const double matmul = static_cast<double>(layer_weights(c));
  // q·k and p·v over the causal half: 2 × 2 × n²/2 × head_dim per head and layer.
  const double attn = 2.0 * n * static_cast<double>(n) * hd * c.n_heads * c.n_layers;
  const double flops = 2.0 * matmul * n + attn;
  fmt::print("  prefill {:>6} tokens: {:9.0f} tok/s ({:7.1f} ms) = {:5.1f}% of the {} rate\n", n,
             n / s, s * 1e3, 100.0 * flops / s / (x.lim.matmul_gflops * 1e9), x.lim.matmul_what);
  return n / s;
}

// With the model split over ranks: the link the collectives cross, a copy of 64 MiB from rank
// 0's memory to rank 1's (GB/s; 0 when not split).
double bench_link(Model& m) {
  auto* split = dynamic_cast<tp::TensorParallelModel*>(&m);
  if (split == nullptr) return 0.0;
  constexpr int64_t kBytes = int64_t{64} << 20;
  const double gbs = static_cast<double>(kBytes) / split->time_link(kBytes, 5) / 1e9;
  fmt::print("  link: a copy of 64 MiB from rank 0's memory to rank 1's at {:.1f} GB/s\n", gbs);
  return gbs;
}

// With the model split over ranks: the step's collectives (one all-reduce of [rows, hidden] f32
// for the embedding and two a layer, one all-gather of the logits) run alone on the ranks'
// group, against the step's time; an all-reduce's bus bandwidth as NCCL counts it (bytes ×
// 2(n − 1)/n over its time) against the link (bench_link's GB/s).
void bench_collectives(Model& m, double link_gbs, int64_t rows, int64_t logit_rows, double step_s) {
  auto* split = dynamic_cast<tp::TensorParallelModel*>(&m);
  if (split == nullptr) return;
  const tp::CollectiveTimes t = split->time_collectives(rows, logit_rows, 8);
  const double n = split->n_ranks(), each = t.all_reduce_seconds / t.all_reduces;
  const double bus = static_cast<double>(t.all_reduce_bytes) * 2.0 * (n - 1) / n / each / 1e9;
  fmt::print(
      "    collectives alone: {} all-reduces of {:.1f} KiB in {:.0f} us ({:.1f} us each, bus "
      "{:.1f} GB/s = {:.1f}% of the link), an all-gather of {:.1f} KiB in {:.0f} us: {:.1f}% of "
      "the step\n",
      t.all_reduces, t.all_reduce_bytes / 1024.0, t.all_reduce_seconds * 1e6, each * 1e6, bus,
      100.0 * bus / link_gbs, t.all_gather_bytes / 1024.0, t.all_gather_seconds * 1e6,
      100.0 * (t.all_reduce_seconds + t.all_gather_seconds) / step_s);
}

// Decode at batch 1 over the long context with bf16, 8-bit and 4-bit KV (groups
// of --kv-group-size), and the cost of the batch-invariant switch: decode at
// batch 1 and the long prefill with it off.
void bench_extras(const Ctx& x, Model& m, double decode_on, double prefill_on) {
  const int64_t min_graph = device_backend(x.device.kind).min_graph_batch();
  if (x.f.max_graph_batch > 0 && min_graph > 1)
    fmt::print(
        "  decode steps of fewer than {} rows run their launches as they go, overlapped "
        "(faster than graphs there); graphs from {} rows\n",
        min_graph, min_graph);
  if (x.f.max_graph_batch > 0 && min_graph == 1) {  // the same steps op by op: what graphs save
    m.set_step_graphs(0);
    fmt::print("  --enforce-eager (no CUDA graphs):\n");
    const double eager = bench_decode(x, m, 1, x.f.prompt_tokens);
    m.set_step_graphs(x.f.max_graph_batch);
    fmt::print("  CUDA graphs: decode batch 1 {:+.1f}% against eager\n",
               100.0 * (decode_on / eager - 1.0));
  }
  const double bf16 = bench_decode(x, m, 1, x.f.long_context);
  for (int32_t bits : {8, 4}) {
    const ops::KvRowQuant q{bits, x.f.kv_group_size};
    const double quantized = bench_decode(x, m, 1, x.f.long_context, q);
    fmt::print("  {}-bit KV g{} at context {}: {:.2f}x the bf16 KV's decode\n", bits, q.group_size,
               x.f.long_context, quantized / bf16);
  }
  DeviceBackend& dev = device_backend(x.device.kind);
  dev.set_batch_invariant(false);
  fmt::print("  batch-invariant switch off:\n");
  const double decode_off = bench_decode(x, m, 1, x.f.prompt_tokens);
  const double prefill_off = bench_prefill(x, m);
  dev.set_batch_invariant(true);
  fmt::print(
      "  cost of batch invariance (the switch-off rate over the invariant one, - 1): decode "
      "batch 1 {:+.1f}%, prefill {:+.1f}% (goal <= 10%; below 0: the invariant mode is faster)\n",
      100.0 * (decode_off / decode_on - 1.0), 100.0 * (prefill_off / prefill_on - 1.0));
}

// The attention's other precision (--attention-precision; exact by default): decode at batch 1
// and at the largest batch, and the long prefill, against this run's figures.
void bench_other_precision(const Ctx& x, Model& m, double decode_on, double batch_on,
                           double prefill_on) {
  DeviceBackend& dev = device_backend(x.device.kind);
  const bool fast = !dev.fast_attention();
  const int32_t batch = x.f.batches.empty() ? 1 : x.f.batches.back();
  dev.set_fast_attention(fast);
  fmt::print("  attention products {}:\n", fast ? "fast" : "exact");
  const double decode = bench_decode(x, m, 1, x.f.prompt_tokens);
  const double batched = bench_decode(x, m, batch, x.f.prompt_tokens);
  const double prefill = bench_prefill(x, m);
  dev.set_fast_attention(!fast);
  // The fast rate over the exact one, - 1, in %: `other` ran under the other precision.
  const auto gain = [fast](double other, double on) {
    return 100.0 * (fast ? other / on - 1.0 : on / other - 1.0);
  };
  fmt::print(
      "  fast attention products against exact: decode batch 1 {:+.1f}%, batch {} {:+.1f}%, "
      "prefill {:+.1f}%\n",
      gain(decode, decode_on), batch, gain(batched, batch_on), gain(prefill, prefill_on));
}

// Each rank's GPU: --rank-devices, then r for the ranks it does not name.
std::vector<int> rank_devices(const DeviceBenchFlags& f) {
  std::vector<int> devices = f.rank_devices;
  for (int r = static_cast<int>(devices.size()); r < f.tensor_parallel; ++r) devices.push_back(r);
  return devices;
}

// The limits a split shape chases: the measured GPU's times the distinct GPUs its ranks use
// (their weights are read, and their products run, on all of them at once; one GPU type).
DeviceLimits split_limits(const DeviceBenchFlags& f, DeviceLimits one) {
  std::vector<int> d = rank_devices(f);
  std::sort(d.begin(), d.end());
  const auto gpus = static_cast<int>(std::unique(d.begin(), d.end()) - d.begin());
  one.bandwidth_gbs *= gpus;
  one.matmul_gflops *= gpus;
  fmt::print("tensor parallel over {} GPU{}: limits {:.0f} GB/s, {:.0f} GFLOP/s (one GPU's x {})\n",
             gpus, gpus == 1 ? "" : "s", one.bandwidth_gbs, one.matmul_gflops, gpus);
  return one;
}

// The shape's model on `device`, or split over f.tensor_parallel ranks on f.rank_devices:
// made on the device, brought to the host, split there, and the ranks' shards placed.
std::unique_ptr<Model> bench_model(const DeviceBenchFlags& f, const std::string& name,
                                   Device device) {
  if (f.tensor_parallel == 1) {
    std::unique_ptr<Model> m = make_device_bench_model(name, f.work_dir, device, f.layers);
    m->set_step_graphs(f.max_graph_batch);
    return m;
  }
  const std::vector<int> devices = rank_devices(f);
  std::unique_ptr<Model> m;
  try {
    m = make_device_bench_model(name, f.work_dir, device, f.layers);
    m->to_device(Device::cpu());
  } catch (const Error& e) {  // the whole shape outgrows one GPU (a 70B): made on the host
    if (e.code() != ErrorCode::kOutOfMemory) throw;
    fmt::print("{} does not fit one GPU whole: its random weights are made on the host\n", name);
    m = make_device_bench_model(name, f.work_dir, Device::cpu(), f.layers);
  }
  m = tp::make_tensor_parallel(std::move(m), f.tensor_parallel);
  dynamic_cast<tp::TensorParallelModel&>(*m).place_ranks(device.kind, devices);
  fmt::print("tensor parallel: {} ranks on GPUs {}, steps run eagerly\n", f.tensor_parallel,
             fmt::join(devices, ", "));
  return m;
}

}  // namespace

void run_device_bench(const DeviceBenchFlags& f, Device device) {
  Ctx x{f, device, measure_device_limits(device)};
  fmt::print("device memory bandwidth (copy, read + write): {:.0f} GB/s\n", x.lim.bandwidth_gbs);
  fmt::print("{}: {:.0f} GFLOP/s\n", x.lim.matmul_what, x.lim.matmul_gflops);
  if (f.tensor_parallel > 1) x.lim = split_limits(f, x.lim);
  for (const std::string& name : f.shapes) {
    auto t0 = Clock::now();
    std::unique_ptr<Model> m = bench_model(f, name, device);
    const ModelConfig& c = m->config();
    fmt::print(
        "{} (bf16 weights a decode step reads {:.2f} GB, bf16 KV {} KiB/token, random weights "
        "made in {:.1f} s), "
        "decode from a context of {} KV positions{}:\n",
        name, bench_weight_bytes(c) / 1e9, kv_bytes_per_token(c) / 1024,
        std::chrono::duration<double>(Clock::now() - t0).count(), f.prompt_tokens,
        f.contiguous_kv ? " (random, contiguous)"
                        : " in the engine's paged state (pages of 32 tokens)");
    const double link = bench_link(*m);
    const double decode1 = bench_decode(x, *m, 1, f.prompt_tokens);
    bench_collectives(*m, link, 1, 1, 1.0 / decode1);
    double batched = decode1;  // the largest batch's tok/s
    for (int32_t b : f.batches) {
      batched = bench_decode(x, *m, b, f.prompt_tokens);
      bench_collectives(*m, link, b, b, b / batched);
    }
    const double prefill = bench_prefill(x, *m);
    bench_collectives(*m, link, f.prefill_tokens, 1, f.prefill_tokens / prefill);
    if (name != f.shapes.front() || f.tensor_parallel > 1) continue;
    bench_extras(x, *m, decode1, prefill);
    bench_other_precision(x, *m, decode1, batched, prefill);
  }
}

}  // namespace cairn
