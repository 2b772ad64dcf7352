#include "backend/cuda/op_errors.h"

#include "core/error.h"

namespace cairn::cuda {

void invalid_argument(const char* op, const std::string& detail) {
  fail(ErrorCode::kInvalidArgument, "{}: {}", op, detail);
}

void unsupported(const char* op, const std::string& detail) {
  fail(ErrorCode::kUnsupported, "{} on CUDA: {}", op, detail);
}

}  // namespace cairn::cuda
