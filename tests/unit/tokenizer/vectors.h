// Reading llama.cpp's tokenizer test vectors (.inp/.out beside each
// ggml-vocab-*.gguf): cases separated by "\n__ggml_vocab_test__\n", ids one
// line per case, without BOS.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cairn::tok::testing {

inline std::string vocab_dir() {
  return std::string(CAIRN_SOURCE_DIR) + "/.cache/llama.cpp/models";
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct VectorCase {
  std::string text;
  std::vector<int32_t> ids;
};

inline std::vector<VectorCase> read_vectors(const std::string& gguf_path) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  const std::string inp = slurp(gguf_path + ".inp");
  const std::string out = slurp(gguf_path + ".out");
  std::vector<VectorCase> cases;
  for (size_t pos = 0; pos < inp.size();) {
    size_t end = inp.find(sep, pos);
    if (end == std::string::npos) end = inp.size();
    cases.push_back({inp.substr(pos, end - pos), {}});
    pos = end + sep.size();
  }
  std::istringstream lines(out);
  std::string line;
  for (auto& c : cases) {
    if (!std::getline(lines, line)) break;
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) c.ids.push_back(id);
  }
  return cases;
}

}  // namespace cairn::tok::testing
