// The communicator of ranks that are threads of one process, each driving a GPU (a rank
// context, rank_context.h), over device tensors: several ranks on one GPU, or GPUs that reach
// each other's memory (peer access, NVLink or PCIe). It meets like the host group
// (rendezvous.h): every rank publishes its buffer with an event marking it written, and its
// stream waits for the others' before it adds its part of the elements over every rank's buffer
// in rank order with a kernel (peer_sum.h), writing the sum into every buffer; so its bits are
// the host group's and the NCCL group's. The host meets at two barriers and never waits for a
// GPU: a collective returns once queued on the rank's stream, ordered with the rank's work. No
// NCCL: how ranks sharing a GPU meet (NCCL refuses two ranks on one device), and the group of GPUs
// without NCCL. No CUDA types here.
#pragma once

#include <vector>

#include "backend/rendezvous.h"

namespace cairn {

class PeerGroup final : public RendezvousGroup {
 public:
  // Rank r on CUDA device devices[r] (repeats allowed). Enables peer access, and access to each
  // device's stream-ordered memory pool, between every two distinct devices listed.
  // Error(kInvalidArgument) for no device, more than 8 ranks or a device not present;
  // Error(kUnsupported) when two of the devices cannot reach each other's memory.
  // Rank r's communicator: its tensors f32, contiguous, in memory of devices[r]; it must be
  // called on a thread whose context is on devices[r]. A collective returns once queued on that
  // context's stream (finish() waits for it).
  explicit PeerGroup(const std::vector<int>& devices);
};

}  // namespace cairn
