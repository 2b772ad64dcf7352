// `cairn tokenize`: text → ids (with pieces) and `--decode` ids → text, for any
// vocabulary load_tokenizer reads.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace cairn::cli {

struct TokenizeArgs {
  std::string model{};                // folder, tokenizer.json, .gguf or llama2.c .bin
  std::string text{};                 // to encode (ignored with decode)
  bool special = false;               // parse special-token text as special tokens
  bool ids_only = false;              // print only the ids
  bool bos = false;                   // prepend BOS
  std::vector<int64_t> decode_ids{};  // non-empty: decode these instead
};

// Runs the verb, writing to out. Throws cairn::Error on a bad model path or id.
void run_tokenize(const TokenizeArgs& args, std::ostream& out);

// Adds the `tokenize` subcommand to app.
void register_tokenize(CLI::App& app);

}  // namespace cairn::cli
