// Fused projections on a GPU: q, k and v read the same input, and so do gate and
// up, so their weights are stacked by rows into one matrix each and every layer
// runs one product where it ran three (and two). On a GPU each product costs a
// launch and, in the invariant mode's thin tiles, a fixed latency whatever its
// width, so fewer, wider products are faster. The stacked matrix gives every
// output column the same arithmetic as its own matrix did (each column is its
// own reduction over the input), so outputs are unchanged bit for bit.
#pragma once

#include "model/decoder.h"

namespace cairn {

// On weights held by a GPU: fills wqkv (and bqkv when every bias is defined)
// and gate_up, and turns wq/wk/wv (bq/bk/bv), gate and up into views of their
// rows (no memory is added). Host weights, or layers whose parts differ in
// dtype or input width, are left as they are.
void fuse_projections(DecoderWeights& w);

}  // namespace cairn
