// The backend unit tests' check of argument errors: f() must throw
// Error(kInvalidArgument) whose message mentions `needle`.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace cairn::test {

template <typename F>
void expect_invalid(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace cairn::test
