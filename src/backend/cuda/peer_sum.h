// The peer group's all-reduce part (peer_group.h): elements [begin, end) of the ranks'
// buffers added in rank order and the sum written back into every buffer.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cairn::cuda {

inline constexpr int kMaxPeerRanks = 8;

// For i in [begin, end): s = ((bufs[0][i] + bufs[1][i]) + bufs[2][i]) + ..., each addition
// rounded on its own, then bufs[r][i] = s for every r. bufs: n_ranks ≤ kMaxPeerRanks f32
// device buffers the current device can reach (its own or peers' memory). Launches on `stream`.
void peer_part_sum(float* const* bufs, int n_ranks, int64_t begin, int64_t end,
                   cudaStream_t stream);

}  // namespace cairn::cuda
