#include "backend/cuda/cuda_ops.h"

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

void register_cuda_ops() {
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
  ops::register_op_table(DeviceKind::kCuda, t);
}

}  // namespace cairn::cuda
