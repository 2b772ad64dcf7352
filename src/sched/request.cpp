#include "sched/request.h"

namespace cairn {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kError:
      return "error";
  }
  return "?";
}

}  // namespace cairn
