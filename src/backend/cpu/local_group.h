// The in-process communicator: N ranks as threads of one process, exchanging
// host f32 tensors through shared memory. Each collective is two barriers: the
// ranks publish their buffers, then each rank reduces (or copies) its part while
// every buffer is still live. For an all-reduce, rank r owns elements
// [r * count / N, (r + 1) * count / N): it sums them over the ranks in rank
// order and writes the sum back into every rank's buffer, so no element is read
// after it is written, and the bits do not depend on which rank came first.
#pragma once

#include "backend/rendezvous.h"

namespace cairn {

class LocalGroup final : public RendezvousGroup {
 public:
  // Error(kInvalidArgument) for n_ranks < 1.
  explicit LocalGroup(int n_ranks);
};

}  // namespace cairn
