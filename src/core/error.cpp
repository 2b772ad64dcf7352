#include "core/error.h"

namespace cairn {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kBadFile:
      return "bad_file";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kOutOfMemory:
      return "out_of_memory";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kContextLength:
      return "context_length_exceeded";
    case ErrorCode::kQueueFull:
      return "queue_full";
    case ErrorCode::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

}  // namespace cairn
