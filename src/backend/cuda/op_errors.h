// Errors raised from CUDA op files. nvcc does not compile core/error.h (fmt's
// compile-time format checks), so .cu files report through these functions,
// which are compiled by the host compiler and throw cairn::Error.
#pragma once

#include <string>

namespace cairn::cuda {

// Throws Error(kInvalidArgument): "<op>: <detail>".
[[noreturn]] void invalid_argument(const char* op, const std::string& detail);
// Throws Error(kUnsupported): "<op> on CUDA: <detail>".
[[noreturn]] void unsupported(const char* op, const std::string& detail);

}  // namespace cairn::cuda
