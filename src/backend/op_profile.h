// Op profiling (`cairn bench --profile-ops`): between start and stop, every entry of
// a device kind's op table is wrapped and timed twice: on the host (call to return:
// for a GPU the launch, argument uploads included) and on the device's timeline
// (marks the backend records before and after: CUDA events on the ops' stream; on
// the CPU, which runs ops as they are issued, the host clock). The report also
// gives the window's wall time, so time outside every op (the model's own host
// work, allocations) and an idle device show. An op that calls another op's entry
// through ops.h is counted in both.
#pragma once

#include <cstddef>
#include <string>

#include "core/tensor.h"

namespace cairn::ops {

// Marks on a device's timeline, recorded in issue order.
class OpMarks {
 public:
  virtual ~OpMarks() = default;
  virtual void mark(size_t i) = 0;                    // records mark i (0, 1, … per window)
  virtual double between_us(size_t a, size_t b) = 0;  // after synchronize()
  virtual void synchronize() = 0;                     // every recorded mark reached
};

// Starts a window on `kind`: installs a table whose entries time the table registered
// now (restored by stop). Call it while no other thread issues ops; `marks` must
// outlive the window.
void start_op_profile(DeviceKind kind, OpMarks& marks);
// Ends the window (after synchronizing) and returns its table: per op (matmul by
// shape) calls, host µs a call, device µs a call and its share of the device time,
// then the totals against the window's wall time. Empty when no window is open.
std::string stop_op_profile(DeviceKind kind);
// True between start and stop on `kind` (work that would bypass the op table, such as
// replaying captured graphs, then runs op by op instead).
bool op_profile_open(DeviceKind kind);

}  // namespace cairn::ops
