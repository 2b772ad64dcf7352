#include "cli/tokenize.h"

#include <fmt/format.h>

#include <iostream>
#include <iterator>
#include <memory>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace cairn::cli {
namespace {

// A piece shown between quotes, with control characters and quotes escaped.
std::string quoted(const std::string& piece) {
  std::string s = "\"";
  for (char c : piece) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (c == '\n') {
      s += "\\n";
    } else if (c == '\t') {
      s += "\\t";
    } else if (c == '\r') {
      s += "\\r";
    } else if (u < 0x20 || u == 0x7F) {
      s += fmt::format("\\x{:02x}", u);
    } else {
      s += c;
    }
  }
  return s + "\"";
}

void decode(const tok::Tokenizer& tok, const TokenizeArgs& args, std::ostream& out) {
  std::vector<int32_t> ids;
  for (int64_t id : args.decode_ids) {
    if (id < 0 || id >= tok.vocab_size())
      fail(ErrorCode::kInvalidArgument, "--decode: id {} is outside the vocabulary of {} tokens",
           id, tok.vocab_size());
    ids.push_back(static_cast<int32_t>(id));
  }
  out << tok.decode(ids, /*skip_special=*/false) << "\n";
}

}  // namespace

void run_tokenize(const TokenizeArgs& args, std::ostream& out) {
  if (args.model.empty()) fail(ErrorCode::kInvalidArgument, "--model: a model path is needed");
  const auto tok = tok::load_tokenizer(args.model);
  if (!args.decode_ids.empty()) {
    decode(*tok, args, out);
    return;
  }
  const auto ids = tok->encode(args.text, {.add_bos = args.bos, .parse_special = args.special});
  if (args.ids_only) {
    for (size_t i = 0; i < ids.size(); ++i) out << (i ? " " : "") << ids[i];
    out << "\n";
    return;
  }
  for (int32_t id : ids) out << fmt::format("{:>8} {}\n", id, quoted(tok->piece(id)));
  out << fmt::format("{} tokens\n", ids.size());
}

void register_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* sub = app.add_subcommand("tokenize", "Print the token ids of TEXT, or decode ids");
  sub->add_option("--model", args->model,
                  "Model folder, tokenizer.json, .gguf file or llama2.c tokenizer .bin")
      ->required();
  sub->add_flag("--special", args->special, "Parse special-token text as special tokens");
  sub->add_flag("--ids-only", args->ids_only, "Print only the ids");
  sub->add_flag("--bos", args->bos, "Prepend the BOS token");
  sub->add_option("--decode", args->decode_ids, "Decode these ids instead");
  sub->add_option("text", args->text, "Text to tokenize (read from stdin when absent)");
  sub->callback([args] {
    if (args->decode_ids.empty() && args->text.empty())
      args->text.assign(std::istreambuf_iterator<char>(std::cin), {});
    run_tokenize(*args, std::cout);
  });
}

}  // namespace cairn::cli
