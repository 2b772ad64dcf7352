// A ParseContext over the tiny vocabulary, shared by the server's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/api_error.h"
#include "server/parsed_request.h"
#include "tiny_model_files.h"

namespace cairn::test {

struct TinyServerModel {
  std::unique_ptr<tok::Tokenizer> tokenizer;
  std::unique_ptr<ChatPrompter> prompter;
  server::ParseContext ctx;

  TinyServerModel() {
    auto dir = std::filesystem::temp_directory_path() /
               ("cairn_server_test_" + std::to_string(::getpid()));
    tokenizer = tok::load_tokenizer(write_tiny_tokenizer(dir));
    prompter = std::make_unique<ChatPrompter>(*tokenizer);
    ctx.tokenizer = tokenizer.get();
    ctx.prompter = prompter.get();
    ctx.stop_ids = {2};
    ctx.context_length = 512;
    ctx.sampling.temperature = 0.7f;
    ctx.sampling.top_p = 0.9f;
  }
};

// The ApiError that `f` throws (fails the test when none).
template <typename F>
server::ApiError api_error_of(F&& f) {
  try {
    f();
  } catch (const server::ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no ApiError thrown";
  return server::ApiError(0, "", "");
}

}  // namespace cairn::test
