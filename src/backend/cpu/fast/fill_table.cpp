#include "backend/cpu/fast/fast.h"

namespace cairn::ops::fast {

void fill_table(OpTable& t) {
  t.matmul = matmul;
  t.embedding = embedding;
  t.rms_norm = rms_norm;
  t.layer_norm = layer_norm;
  t.rope = rope;
  t.attention = attention;
  t.attention_seqs = attention_seqs;
  t.gated_activation = gated_activation;
  t.gated_activation_fused = gated_activation_fused;
  t.add = add;
  t.scale = scale;
  t.softcap = softcap;
  t.softmax = softmax;
  t.log_softmax = log_softmax;
  t.convert = convert;
  t.convert_rows = convert_rows;
}

}  // namespace cairn::ops::fast
