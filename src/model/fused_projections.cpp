#include "model/fused_projections.h"

#include <initializer_list>

#include "backend/device.h"

namespace cairn {
namespace {

// Whether the parts stack: defined, contiguous, one dtype, device and width.
bool stackable(std::initializer_list<const Tensor*> parts) {
  const Tensor& first = **parts.begin();
  for (const Tensor* p : parts)
    if (!p->defined() || !p->is_contiguous() || p->dtype() != first.dtype() ||
        p->ndim() != first.ndim() || !(p->device() == first.device()) ||
        (p->ndim() == 2 && p->dim(1) != first.dim(1)))
      return false;
  return true;
}

// The parts' rows stacked into one new tensor; each part becomes a view of its rows.
Tensor stack_rows(std::initializer_list<Tensor*> parts) {
  const Tensor& first = **parts.begin();
  Shape shape = first.shape();
  shape[0] = 0;
  for (const Tensor* p : parts) shape[0] += p->dim(0);
  Tensor all = empty_on(first.device(), shape, first.dtype());
  DeviceBackend& dev = device_backend(first.device().kind);
  int64_t at = 0;
  for (Tensor* p : parts) {
    Tensor rows = all.slice_rows(at, at + p->dim(0));
    dev.copy(*p, rows);
    *p = rows;
    at += rows.dim(0);
  }
  return all;
}

}  // namespace

void fuse_projections(DecoderWeights& w) {
  if (w.layers.empty() || !w.layers.front().attn.wq.defined()) return;
  const Device device = w.layers.front().attn.wq.device();
  if (device.kind == DeviceKind::kCpu) return;
  for (LayerWeights& l : w.layers) {
    AttentionWeights& a = l.attn;
    if (!a.wqkv.defined() && stackable({&a.wq, &a.wk, &a.wv})) {
      const bool biased = a.bq.defined() || a.bk.defined() || a.bv.defined();
      if (!biased || stackable({&a.bq, &a.bk, &a.bv})) {
        a.wqkv = stack_rows({&a.wq, &a.wk, &a.wv});
        if (biased) a.bqkv = stack_rows({&a.bq, &a.bk, &a.bv});
      }
    }
    MlpWeights& m = l.mlp;
    if (!m.gate_up.defined() && stackable({&m.gate, &m.up}))
      m.gate_up = stack_rows({&m.gate, &m.up});
  }
  device_backend(device.kind).synchronize();  // the copies are done before anything runs
}

}  // namespace cairn
