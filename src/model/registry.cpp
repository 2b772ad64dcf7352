#include "model/registry.h"

#include <filesystem>

#include "core/error.h"
#include "io/llama2c_checkpoint.h"
#include "io/weight_store.h"
#include "model/families/families.h"

namespace cairn {
namespace fs = std::filesystem;
namespace {

using Loader = std::unique_ptr<Model> (*)(const ModelConfig&, io::WeightStore&);

struct Family {
  const char* model_type;
  Loader load;
};

constexpr Family kFamilies[] = {
    {"gemma2", families::load_gemma2}, {"gemma3_text", families::load_gemma3_text},
    {"llama", families::load_llama},   {"mistral", families::load_llama},
    {"phi3", families::load_phi3},     {"qwen2", families::load_qwen2},
    {"qwen3", families::load_qwen3},
};

const Family& find_family(const ModelConfig& c) {
  for (const Family& f : kFamilies)
    if (c.model_type == f.model_type) return f;
  std::string list;
  for (const std::string& t : supported_model_types()) list += (list.empty() ? "" : ", ") + t;
  fail(ErrorCode::kUnsupported, "{}/config.json: model_type '{}' is not supported (supported: {})",
       c.path, c.model_type, list);
}

// The llama2.c checkpoint a path names: the file itself, or the one .bin in a
// folder whose header and size fit (a tokenizer .bin beside it does not). "" if none.
std::string find_llama2c(const std::string& path) {
  if (fs::is_regular_file(path)) return io::is_llama2c_checkpoint(path) ? path : "";
  if (!fs::is_directory(path) || fs::exists(fs::path(path) / "config.json")) return "";
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(path))
    if (e.path().extension() == ".bin" && io::is_llama2c_checkpoint(e.path().string()))
      found.push_back(e.path().string());
  if (found.size() > 1)
    fail(ErrorCode::kBadFile, "{}: {} llama2.c checkpoints; name one file", path, found.size());
  return found.empty() ? "" : found[0];
}

void summarize(const io::WeightStore& ws, ModelConfig& c) {
  for (const io::SafetensorsEntry* e : ws.entries()) {
    c.weights.n_params += e->shape.numel();
    c.weights.bytes_by_dtype[e->dtype_name] += static_cast<int64_t>(e->size_bytes);
  }
  c.weights.total_bytes = static_cast<int64_t>(ws.total_bytes());
}

void check_path(const std::string& path) {
  if (!fs::exists(path)) fail(ErrorCode::kBadFile, "{}: no such file or folder", path);
  if (fs::is_regular_file(path) && !io::is_llama2c_checkpoint(path))
    fail(ErrorCode::kBadFile,
         "{}: not a llama2.c checkpoint (header or size do not fit); "
         "pass an HF model folder or a llama2.c .bin",
         path);
}

void require_config(const std::string& folder) {
  if (!fs::exists(fs::path(folder) / "config.json"))
    fail(ErrorCode::kBadFile, "{}: not a model folder: no config.json and no llama2.c checkpoint",
         folder);
}

}  // namespace

std::vector<std::string> supported_model_types() {
  std::vector<std::string> out;
  for (const Family& f : kFamilies) out.emplace_back(f.model_type);
  return out;
}

ModelConfig inspect_model(const std::string& path) {
  check_path(path);
  std::string ck = find_llama2c(path);
  if (!ck.empty()) return families::llama2c_config(ck);
  require_config(path);
  ModelConfig c = parse_hf_config(path);
  summarize(io::WeightStore::open_folder(path), c);
  return c;
}

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts) {
  check_path(path);
  std::string ck = find_llama2c(path);
  if (!ck.empty()) {
    if (opts.progress) opts.progress(fs::file_size(ck), fs::file_size(ck));
    return families::load_llama2c(ck);
  }
  require_config(path);
  ModelConfig c = parse_hf_config(path);
  const Family& family = find_family(c);
  io::WeightStore ws = io::WeightStore::open_folder(path);
  summarize(ws, c);
  ws.set_progress(opts.progress, opts.prefault);
  std::unique_ptr<Model> model = family.load(c, ws);
  if (opts.progress) opts.progress(ws.total_bytes(), ws.total_bytes());  // headers, unused tensors
  return model;
}

}  // namespace cairn
