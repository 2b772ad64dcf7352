// The communicator of one rank per GPU (communicator.h) over NCCL, for the
// ranks of one process, each driven by its own thread. Built when NCCL is found
// beside the CUDA toolkit (CAIRN_HAVE_NCCL). No NCCL or CUDA types here.
//
// all_reduce_sum is an ncclAllGather of the ranks' partials into a [N, count]
// buffer, then a kernel that adds the rows in rank order (rank_sum.h): not
// ncclAllReduce, whose order of addition depends on the algorithm and topology
// NCCL picks. So its bits equal the in-process group's, run to run.
#pragma once

#include <memory>
#include <vector>

#include "backend/communicator.h"

namespace cairn {

class NcclGroup final : public RankGroup {
 public:
  // One communicator per CUDA device index in `devices` (rank r on devices[r]),
  // made together by ncclCommInitAll after NCCL_NVLS_ENABLE=0 is set, so no
  // NVLink SHARP multicast objects are made. Error(kInvalidArgument) for an
  // empty list; Error(kInternal) naming NCCL's message when it fails.
  explicit NcclGroup(const std::vector<int>& devices);
  ~NcclGroup() override;
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  int size() const override;
  // Rank r's communicator, used by a thread bound to devices[r] (rank_context.h). Its tensors
  // must be f32, contiguous and in the memory of devices[r]; a collective is queued on that
  // thread's stream, ordered with its ops, and finish() waits for it, polling NCCL's errors
  // and the group's abort so that a peer that never arrives does not hang the caller.
  Communicator& rank(int r) override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::vector<std::unique_ptr<Communicator>> ranks_;
};

}  // namespace cairn
