// Typed errors. Bad input from a user or a file surfaces as a cairn::Error whose
// message names the file, field or parameter at fault; the CLI and the server
// catch it at their boundary and turn it into a message or an HTTP status.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace cairn {

enum class ErrorCode {
  kInvalidArgument,  // a parameter a caller passed is out of range
  kBadFile,          // a file is missing, truncated or malformed
  kUnsupported,      // well-formed input that cairn does not handle
  kOutOfMemory,      // a byte budget cannot hold what was asked
  kIo,               // an operating-system call failed
  kInternal,         // a broken invariant: a bug in cairn
  kContextLength,    // a prompt (plus what it asks to generate) exceeds the context
  kQueueFull,        // the engine's waiting queue is at its cap: try again later
  kUnavailable,      // the engine is stopping and admits nothing new
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

template <typename... Args>
[[noreturn]] void fail(ErrorCode code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cairn

// Internal invariant check: active in every build; a failure is a bug, not bad input.
// CAIRN_CHECK(cond, "format {}", args...): the message says what was expected.
#define CAIRN_CHECK(cond, format, ...)                                                           \
  do {                                                                                           \
    if (!(cond))                                                                                 \
      ::cairn::fail(::cairn::ErrorCode::kInternal, "{}:{}: check failed: {}: " format, __FILE__, \
                    __LINE__, #cond __VA_OPT__(, ) __VA_ARGS__);                                 \
  } while (0)
