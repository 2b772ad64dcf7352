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
#include "backend/cuda/op_profile.h"
#include "backend/cuda/quantize_rows.h"
#include "backend/cuda/rope.h"
#include "backend/cuda/sample_rows.h"
#include "backend/cuda/softmax.h"
#include "backend/cuda/split_columns.h"
#include "backend/op_table.h"

namespace cairn::cuda {

namespace {

// Every entry of the CUDA op table, by its member's (and function's) name.
#define CAIRN_CUDA_OPS(X)                                                                 \
  X(matmul)                                                                               \
  X(embedding)                                                                            \
  X(rms_norm) X(layer_norm) X(rope) X(attention) X(attention_seqs) X(attention_pages)     \
      X(gated_activation) X(add) X(scale) X(softcap) X(softmax) X(log_softmax) X(convert) \
          X(convert_rows) X(quantize_rows) X(split_columns) X(sample_rows) X(add_rms_norm)

ops::OpTable table(bool timed) {
  ops::OpTable t;
#define CAIRN_PLAIN(op) t.op = &op;
#define CAIRN_TIMED(op) t.op = &Timed<#op, &op>::call;
  if (timed) {
    CAIRN_CUDA_OPS(CAIRN_TIMED)
  } else {
    CAIRN_CUDA_OPS(CAIRN_PLAIN)
  }
#undef CAIRN_PLAIN
#undef CAIRN_TIMED
  return t;
}

}  // namespace

void register_cuda_ops() {
  ops::register_op_table(DeviceKind::kCuda, table(false));
}

void install_timed_ops() {
  ops::register_op_table(DeviceKind::kCuda, table(true));
}

}  // namespace cairn::cuda
