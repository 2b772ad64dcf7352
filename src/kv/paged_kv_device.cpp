// The paged KV state on a GPU: pages in device memory (PagePool), rows written
// and attended by the device's ops in a handful of launches per layer,
// whatever the number of sequences. A layer's call groups its spans by the
// format their sequence is in (full precision, or quantized once it crossed
// quant_start): per group one convert_rows or quantize_rows writes every new
// row into its page, and one attention_pages attends every span over its
// pages. The bytes a page holds are the host state's for the same rows
// (convert and quantize_rows encode as row_codec does), so the prefix tiers and
// checkpoints move pages between host and device states unchanged.
#include <deque>

#include "backend/device.h"
#include "backend/on_device.h"
#include "core/error.h"
#include "kv/paged_kv.h"

namespace cairn {
namespace {

DType store_dtype(KvStore store) {
  switch (store) {
    case KvStore::kF32:
      return DType::kF32;
    case KvStore::kBF16:
      return DType::kBF16;
    case KvStore::kF16:
      return DType::kF16;
    case KvStore::kAffine:
      return DType::kU8;
  }
  return DType::kU8;
}

ops::KvRowQuant row_quant(const LayerFormat& f) {
  return f.quantized() ? ops::KvRowQuant{f.bits, f.group_size} : ops::KvRowQuant{};
}

}  // namespace

// One format's share of a layer's call.
struct PagedKvState::DeviceCall {
  std::deque<Tensor> blocks;  // page blocks the copies write (stable addresses)
  std::vector<ops::RowCopy> copies;
  std::vector<const void*> pages;  // every span's page table, back to back
  std::vector<ops::AttentionSeq> seqs;
};

// Span rows [len, len + n) of layer il go to their pages (already present and
// private); the span attends n_kv = len + n keys through its page table.
void PagedKvState::add_device_span(const Sequence& s, int il, const SeqSpan& span, int64_t len,
                                   const Tensor& k, const Tensor& v, DeviceCall& c) const {
  const int g = group_of_[static_cast<size_t>(il)];
  const auto li = static_cast<size_t>(index_in_group_[static_cast<size_t>(il)]);
  const PageLayout& lay = layout(s, g);
  const int32_t a = arena(s, g);
  const LayerFormat& f = lay.formats[li];
  const int64_t row =
      f.quantized() ? static_cast<int64_t>(f.row_bytes(config_.head_dim)) : config_.head_dim;
  const Shape block{page_tokens_, config_.n_kv_heads, row};
  const GroupState& gs = s.groups[static_cast<size_t>(g)];
  for (int64_t pos = len; pos < len + span.n_tokens;) {
    const int64_t pi = pos / page_tokens_;
    const int64_t n = std::min(len + span.n_tokens, (pi + 1) * page_tokens_) - pos;
    const int32_t id = gs.pages[static_cast<size_t>(pi)];
    c.blocks.push_back(pool_.view(a, id, lay.k_offset[li], block, store_dtype(f.store)));
    c.copies.push_back({&k, span.token_begin + pos - len, &c.blocks.back(), pos % page_tokens_, n});
    c.blocks.push_back(pool_.view(a, id, lay.v_offset[li], block, store_dtype(f.store)));
    c.copies.push_back({&v, span.token_begin + pos - len, &c.blocks.back(), pos % page_tokens_, n});
    pos += n;
  }
  const auto page_begin = static_cast<int64_t>(c.pages.size());
  for (int32_t id : gs.pages) c.pages.push_back(id < 0 ? nullptr : pool_.data(a, id));
  c.seqs.push_back(
      {nullptr, nullptr, span.token_begin, span.n_tokens, len + span.n_tokens, page_begin});
}

void PagedKvState::run_device_call(int il, bool quantized, DeviceCall& c, const ForwardBatch& batch,
                                   const Tensor& q, const ops::AttentionParams& p,
                                   Tensor& out) const {
  if (c.seqs.empty()) return;
  const int g = group_of_[static_cast<size_t>(il)];
  const auto li = static_cast<size_t>(index_in_group_[static_cast<size_t>(il)]);
  const GroupInfo& gi = groups_[static_cast<size_t>(g)];
  const PageLayout& lay = quantized ? gi.quant : gi.full;
  const LayerFormat& f = lay.formats[li];
  ops::AttentionParams params = p;
  params.kv_quant = row_quant(f);
  if (f.quantized())
    ops::quantize_rows(c.copies, params.kv_quant);
  else
    ops::convert_rows(c.copies);
  const ops::KvPages kv{c.pages,      lay.k_offset[li],   lay.v_offset[li],
                        page_tokens_, config_.n_kv_heads, store_dtype(f.store)};
  ops::attention_pages(q, kv, c.seqs, batch.positions, params, out);
}

void PagedKvState::append_and_attend_device(int il, const ForwardBatch& batch, const Tensor& q,
                                            const Tensor& k, const Tensor& v,
                                            const ops::AttentionParams& p, Tensor& out) {
  CAIRN_CHECK(q.device() == pool_.device() && k.device() == pool_.device() &&
                  out.device() == pool_.device(),
              "q/k/v/out must be on the KV pages' device (q {})", q.describe());
  const int g = group_of_[static_cast<size_t>(il)];
  DeviceCall calls[2];  // [quantized]
  std::vector<Sequence*> touched;
  for (const SeqSpan& span : batch.spans) {
    if (span.n_tokens == 0) continue;
    Sequence& s = seq_for(span.seq_slot);
    for (const std::shared_ptr<LayerGate>& gate : s.gates) gate->wait_layer(il);
    check_positions(s, il, span, batch);
    int64_t& len = s.n_layer[static_cast<size_t>(il)];
    ensure_pages(s, g, len, len + span.n_tokens);
    add_device_span(s, il, span, len, k, v, calls[s.quantized ? 1 : 0]);
    len += span.n_tokens;
    touched.push_back(&s);
  }
  for (int qz = 0; qz < 2; ++qz) run_device_call(il, qz == 1, calls[qz], batch, q, p, out);
  // Pages released or converted below are freed in stream order, after the
  // kernels above that read them.
  for (Sequence* s : touched) after_layer(*s, il);
}

// convert_page on the device: each layer's K and V block decoded to f32 (exact)
// and encoded in the quantized layout's format (a layer the scheme leaves in
// full precision is copied).
void PagedKvState::convert_page_device(const GroupInfo& gi, int32_t from, int32_t to) {
  const OnDevice on(pool_.device());  // a shard's pages on another GPU than this thread's
  DeviceBackend& dev = device_backend(pool_.device().kind);
  const Shape f32_shape{page_tokens_, config_.n_kv_heads, config_.head_dim};
  Tensor staging = empty_on(pool_.device(), f32_shape, DType::kF32);
  for (size_t li = 0; li < gi.group.layers.size(); ++li) {
    const LayerFormat &ff = gi.full.formats[li], &qf = gi.quant.formats[li];
    for (int kv = 0; kv < 2; ++kv) {
      const size_t src_off = kv ? gi.full.v_offset[li] : gi.full.k_offset[li];
      const size_t dst_off = kv ? gi.quant.v_offset[li] : gi.quant.k_offset[li];
      const Tensor src = pool_.view(gi.full_arena, from, src_off, f32_shape, store_dtype(ff.store));
      if (!qf.quantized()) {
        Tensor dst = pool_.view(gi.quant_arena, to, dst_off, f32_shape, store_dtype(qf.store));
        ops::convert(src, dst);
        continue;
      }
      if (ff.store == KvStore::kF32)
        dev.copy(src, staging);
      else
        ops::convert(src, staging);
      Tensor dst = pool_.view(
          gi.quant_arena, to, dst_off,
          {page_tokens_, config_.n_kv_heads, static_cast<int64_t>(qf.row_bytes(config_.head_dim))},
          DType::kU8);
      const ops::RowCopy c{&staging, 0, &dst, 0, page_tokens_};
      ops::quantize_rows(std::span(&c, 1), row_quant(qf));
    }
  }
}

}  // namespace cairn
