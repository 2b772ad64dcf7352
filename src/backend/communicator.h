// The seam between a tensor-parallel rank's forward and the other ranks: the two
// collectives the forward needs, called by every rank of a group in the same
// order with the same sizes. One object per rank. The in-process group
// (cpu/local_group.h) runs ranks as CPU threads over host tensors; the NCCL
// group (cuda/nccl/nccl_group.h, CUDA builds) runs one rank per GPU over device
// tensors, and the peer group (cuda/peer_group.h) runs ranks as threads of one
// process over device tensors of one GPU or of GPUs that reach each other's
// memory. Model code sees only this interface (model/tp/) and RankGroup.
//
// Determinism contract: all_reduce_sum adds the ranks' values in rank order,
// ((x0 + x1) + x2) + ..., whatever order the ranks arrive in, so a result is
// bitwise the same run to run at a fixed group size, and bitwise the same on
// every rank.
#pragma once

#include "core/tensor.h"

namespace cairn {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // x [any shape] f32, contiguous, the same element count on every rank:
  // replaced by the sum over ranks, in rank order. Blocks until every rank has
  // called it; on a device, the sum is then ready in the order of the rank's
  // stream (finish()).
  virtual void all_reduce_sum(Tensor& x) = 0;

  // send [count] f32 contiguous (the same count on every rank) into
  // recv [size() * count]: rank r's values land at [r * count, (r + 1) * count).
  virtual void all_gather(const Tensor& send, Tensor& recv) = 0;

  // Wakes every rank waiting in a collective with an error (a rank failed and
  // will not arrive); the group stays broken until reset(). Safe from any thread.
  virtual void abort() = 0;
  // Makes an aborted group usable again; called once no rank is inside a collective.
  virtual void reset() = 0;

  // Collectives on a device may return once queued on the rank's stream, ordered with the
  // rank's other work there: finish() returns once those this rank issued are complete, so
  // that another stream or the host may use what they wrote. Error(kUnavailable) when the
  // group is aborted while it waits. A host group's collectives are done when they return.
  virtual void finish() = 0;
};

// The communicators of a group's ranks, made together (DeviceBackend::make_rank_group).
class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int size() const = 0;
  // Rank r's communicator; lives as long as the group. Each is used by one thread.
  virtual Communicator& rank(int r) = 0;
};

}  // namespace cairn
