// load_tokenizer: decides the format from the path and hands over to a loader.
#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "tokenizer/loaders.h"
#include "tokenizer/tokenizer.h"

namespace cairn::tok {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A llama2.c tokenizer beside a checkpoint: tokenizer.bin, else the first tok*.bin.
std::string find_llama2c_file(const fs::path& folder) {
  if (fs::exists(folder / "tokenizer.bin")) return (folder / "tokenizer.bin").string();
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("tok", 0) == 0 && ends_with(name, ".bin"))
      found.push_back(entry.path().string());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? std::string() : found.front();
}

std::unique_ptr<Pipeline> load_folder(const fs::path& folder) {
  if (fs::exists(folder / "tokenizer.json"))
    return load_hf((folder / "tokenizer.json").string(), folder.string());
  const std::string bin = find_llama2c_file(folder);
  if (!bin.empty()) return load_llama2c(bin);
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".gguf") return load_gguf_vocab(entry.path().string());
  }
  fail(ErrorCode::kBadFile,
       "{}: no tokenizer.json, llama2.c tokenizer (tokenizer.bin, tok*.bin) or .gguf file",
       folder.string());
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return std::make_unique<Tokenizer>(load_folder(p));
  if (!fs::exists(p, ec)) fail(ErrorCode::kIo, "{}: no such file or folder", path);
  if (ends_with(path, ".gguf")) return std::make_unique<Tokenizer>(load_gguf_vocab(path));
  if (ends_with(path, ".json"))
    return std::make_unique<Tokenizer>(load_hf(path, p.parent_path().string()));
  return std::make_unique<Tokenizer>(load_llama2c(path));
}

}  // namespace cairn::tok
