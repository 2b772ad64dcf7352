// The third limit of the batch-invariant GEMM (limits.h has the other two): the latency of one
// dependent k16 tensor-core step. Every output of that GEMM walks k as one chain of such steps
// (mma_gemm.h: no split of k), so a product of width k takes at least k / 16 of them, however
// many blocks and bytes a second serve it (docs/cuda.md).
#pragma once

namespace cairn::cuda {

struct K16StepLatency {
  double mma_sync_ns = 0;  // mma.sync m16n8k16, one warp, operands in registers
  double wgmma_ns = 0;     // wgmma m64n64k16 from shared memory, groups of 4 with one left
                           // running (wgmma_gemm.cu's loop); 0 where wgmma does not run
};

// Each chain of 4,096 dependent steps timed on the device (%globaltimer) in one block alone,
// the last of 3 runs; ns a step.
K16StepLatency measure_k16_step_latency();

}  // namespace cairn::cuda
