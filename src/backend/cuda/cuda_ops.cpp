#include "backend/cuda/cuda_ops.h"

#include <atomic>
#include <cstdlib>

#include "backend/cuda/attention.h"
#include "backend/cuda/attention_seqs.h"
#include "backend/cuda/convert.h"
#include "backend/cuda/convert_rows.h"
#include "backend/cuda/elementwise.h"
#include "backend/cuda/embedding.h"
#include "backend/cuda/gated_activation.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/norms.h"
#include "backend/cuda/quantize_rows.h"
#include "backend/cuda/rope.h"
#include "backend/cuda/sample_rows.h"
#include "backend/cuda/softmax.h"
#include "backend/cuda/split_columns.h"
#include "backend/op_table.h"

namespace cairn::cuda {

namespace {

// On unless CAIRN_CUDA_FUSED_INPUTS=0 at start-up (set_fused_inputs).
std::atomic<bool>& fused_slot() {
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("CAIRN_CUDA_FUSED_INPUTS");
    return v == nullptr || v[0] != '0';
  }()};
  return on;
}

ops::OpTable cuda_table() {
  ops::OpTable t;
  t.matmul = &matmul;
  t.embedding = &embedding;
  t.rms_norm = &rms_norm;
  t.layer_norm = &layer_norm;
  t.rope = &rope;
  t.attention = &attention;
  t.attention_seqs = &attention_seqs;
  t.attention_pages = &attention_pages;
  t.gated_activation = &gated_activation;
  t.gated_activation_fused = &gated_activation_fused;
  t.add = &add;
  t.scale = &scale;
  t.softcap = &softcap;
  t.softmax = &softmax;
  t.log_softmax = &log_softmax;
  t.convert = &convert;
  t.convert_rows = &convert_rows;
  t.quantize_rows = &quantize_rows;
  t.split_columns = &split_columns;
  t.sample_rows = &sample_rows;
  t.add_rms_norm = &add_rms_norm;
  if (fused_inputs()) {
    t.split_rope = &split_rope;
    t.matmul_input_dtype = &matmul_input_dtype;
  }
  return t;
}

}  // namespace

void register_cuda_ops() {
  ops::register_op_table(DeviceKind::kCuda, cuda_table());
}

bool fused_inputs() {
  return fused_slot().load();
}

void set_fused_inputs(bool on) {
  fused_slot().store(on);
  register_cuda_ops();
}

}  // namespace cairn::cuda
