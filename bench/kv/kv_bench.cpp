// Decode attention over paged KV: one query token of a Llama-3.1-8B-shaped
// layer (32 heads, 8 kv heads, head_dim 128) over 4k and 32k positions, for
// each format; GB/s of KV read against the memory bandwidth measured in the
// same run, and bytes per position. Layers rotate so the KV comes from memory.
//   cairn_kv_bench [--quick]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/machine_limits.h"
#include "kv/paged_kv.h"
#include "kv/row_codec.h"

namespace {

using namespace cairn;

ModelConfig shape(int64_t n_layers) {
  ModelConfig c;
  c.n_layers = n_layers;
  c.n_heads = 32;
  c.n_kv_heads = 8;
  c.head_dim = 128;
  c.layer_window.assign(static_cast<size_t>(n_layers), 0);
  c.torch_dtype = "bfloat16";
  return c;
}

// An export of ctx positions whose rows are encoded from pseudo-random floats.
SequenceExport fill(const ModelConfig& c, const std::vector<LayerFormat>& f, int64_t ctx,
                    int64_t pt, std::vector<std::vector<uint8_t>>& store) {
  const LayerGroup g = layer_groups(c)[0];
  const PageLayout lay = make_page_layout(g, f, pt, c.n_kv_heads, c.head_dim);
  SequenceExport e{pt, ctx, f[0].quantized(), 0, {{0, lay.formats, lay.page_bytes, {}}}};
  std::vector<float> row(static_cast<size_t>(c.head_dim));
  uint32_t s = 1;
  const int64_t n_pages = (ctx + pt - 1) / pt;
  store.assign(static_cast<size_t>(n_pages),
               std::vector<uint8_t>(static_cast<size_t>(lay.page_bytes)));
  for (int64_t p = 0; p < n_pages; ++p) {
    for (size_t li = 0; li < lay.formats.size(); ++li)
      for (int64_t r = 0; r < pt * c.n_kv_heads; ++r)
        for (size_t off : {lay.k_offset[li], lay.v_offset[li]}) {
          for (float& x : row)
            x = static_cast<float>((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
          const size_t rb = lay.formats[li].row_bytes(c.head_dim);
          encode_row(row.data(), c.head_dim, lay.formats[li],
                     store[static_cast<size_t>(p)].data() + off + static_cast<size_t>(r) * rb);
        }
    e.groups[0].pages.push_back({p * pt, store[static_cast<size_t>(p)]});
  }
  return e;
}

void run(int64_t ctx, int64_t n_layers, const LayerFormat& f, double bw_gbs, int reps) {
  ModelConfig c = shape(n_layers);
  PagedKvOptions o;
  o.page_tokens = kDefaultPageTokens;
  o.budget_bytes = int64_t{1} << 40;
  const bool q = f.quantized();
  o.full_store = q ? KvStore::kBF16 : f.store;
  if (q) o.quant = {std::vector<LayerFormat>(static_cast<size_t>(n_layers), f), 1 << 30};
  PagedKvState kv(c, o);
  std::vector<std::vector<uint8_t>> store;
  kv.import_sequence(
      0, fill(c, q ? o.quant.layers : std::vector<LayerFormat>(static_cast<size_t>(n_layers), f),
              ctx, o.page_tokens, store));
  store.clear();
  Tensor qt = Tensor::empty({1, 32, 128}, DType::kF32), k = Tensor::empty({1, 8, 128}, DType::kF32);
  Tensor v = Tensor::empty({1, 8, 128}, DType::kF32),
         out = Tensor::empty({1, 32, 128}, DType::kF32);
  for (int64_t i = 0; i < qt.numel(); ++i) qt.data<float>()[i] = 0.01f * static_cast<float>(i % 97);
  for (int64_t i = 0; i < k.numel(); ++i)
    k.data<float>()[i] = v.data<float>()[i] = 0.02f * static_cast<float>(i % 31);
  std::vector<double> secs;
  for (int r = 0; r < reps; ++r) {
    ForwardBatch b{{0}, {static_cast<int32_t>(ctx + r)}, {{0, 0, 1, true}}};
    auto t0 = std::chrono::steady_clock::now();
    for (int il = 0; il < n_layers; ++il)
      kv.append_and_attend(il, b, qt, k, v, {1.0f / std::sqrt(128.0f), 0.0f, 0}, out);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                   static_cast<double>(n_layers));
  }
  std::sort(secs.begin(), secs.end());
  const double t = secs[secs.size() / 2];
  const double bytes =
      static_cast<double>(kv_bytes_per_token(f, 8, 128)) * static_cast<double>(ctx);
  fmt::print("| {} | {} | {} | {:.3f} | {:.2f} | {:.0f}% |\n", ctx, f.name(),
             kv_bytes_per_token(f, 8, 128), t * 1e3, bytes / t / 1e9,
             100.0 * bytes / t / 1e9 / bw_gbs);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const double bw = ops::cpu::measure_memory_bandwidth_gbs();
  fmt::print("memory bandwidth (copy, read+write): {:.1f} GB/s\n\n", bw);
  fmt::print(
      "| context | format | KV bytes per position per layer | ms per layer | GB/s | of bandwidth "
      "|\n");
  fmt::print("|---|---|---|---|---|---|\n");
  const std::vector<LayerFormat> formats = {full_format(KvStore::kF32), full_format(KvStore::kBF16),
                                            affine_format(8, 64),       affine_format(4, 64),
                                            affine_format(4, 32),       affine_format(4, 128)};
  for (const LayerFormat& f : formats) run(4096, quick ? 4 : 16, f, bw, quick ? 3 : 7);
  for (const LayerFormat& f : formats) run(32768, 2, f, bw, quick ? 2 : 5);
  return 0;
}
