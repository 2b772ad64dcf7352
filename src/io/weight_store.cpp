#include "io/weight_store.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "io/json_reader.h"

namespace cairn::io {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> shard_names(const std::string& folder) {
  fs::path index = fs::path(folder) / "model.safetensors.index.json";
  std::vector<std::string> names;
  if (fs::exists(index)) {
    nlohmann::json j = read_json_file(index.string());
    auto wm = j.is_object() ? j.find("weight_map") : j.end();
    if (wm == j.end() || !wm->is_object())
      fail(ErrorCode::kBadFile, "{}: field 'weight_map' is missing or not an object",
           index.string());
    std::set<std::string> unique;
    for (auto it = wm->begin(); it != wm->end(); ++it) {
      if (!it->is_string())
        fail(ErrorCode::kBadFile, "{}: field 'weight_map.{}' is not a file name", index.string(),
             it.key());
      unique.insert(it->get<std::string>());
    }
    names.assign(unique.begin(), unique.end());
    return names;
  }
  if (!fs::is_directory(folder)) fail(ErrorCode::kBadFile, "{}: not a folder", folder);
  // As transformers: model.safetensors alone when present (other files may sit beside it).
  if (fs::exists(fs::path(folder) / "model.safetensors")) return {"model.safetensors"};
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().extension() == ".safetensors") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  if (names.empty()) fail(ErrorCode::kBadFile, "{}: no *.safetensors file", folder);
  return names;
}

}  // namespace

WeightStore WeightStore::open_folder(const std::string& folder) {
  WeightStore s;
  s.folder_ = folder;
  for (const std::string& name : shard_names(folder)) {
    std::string path = (fs::path(folder) / name).string();
    if (!fs::exists(path)) fail(ErrorCode::kBadFile, "{}: missing (listed in the index)", path);
    s.files_.push_back(SafetensorsFile::open(path));
    s.total_bytes_ += s.files_.back()->size_bytes();
  }
  for (size_t fi = 0; fi < s.files_.size(); ++fi)
    for (const SafetensorsEntry& e : s.files_[fi]->entries()) s.by_name_[e.name] = {fi, &e};
  return s;
}

bool WeightStore::has(const std::string& name) const {
  return by_name_.count(name) != 0;
}

std::string WeightStore::file_of(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? folder_ : files_[it->second.first]->path();
}

void WeightStore::set_progress(ProgressFn fn, bool prefault) {
  progress_ = std::move(fn);
  prefault_ = prefault;
}

Tensor WeightStore::get(const std::string& name, const Shape& shape) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) fail(ErrorCode::kBadFile, "{}: tensor '{}' is missing", folder_, name);
  const SafetensorsFile& f = *files_[it->second.first];
  const SafetensorsEntry& e = *it->second.second;
  if (!e.has_dtype || !dtype_is_float(e.dtype))
    fail(ErrorCode::kBadFile, "{}: tensor '{}' has dtype {}, expected F32, BF16 or F16", f.path(),
         name, e.dtype_name);
  if (!(e.shape == shape))
    fail(ErrorCode::kBadFile, "{}: tensor '{}' has shape {}, expected {}", f.path(), name,
         e.shape.to_string(), shape.to_string());
  Tensor t = f.tensor(e);
  if (prefault_) {
    volatile uint8_t sink = 0;
    const uint8_t* p = static_cast<const uint8_t*>(t.raw());
    for (size_t i = 0; i < e.size_bytes; i += 4096) sink = sink + p[i];
  }
  done_bytes_ += e.size_bytes;
  if (progress_) progress_(std::min(done_bytes_, total_bytes_), total_bytes_);
  return t;
}

std::vector<const SafetensorsEntry*> WeightStore::entries() const {
  std::vector<const SafetensorsEntry*> out;
  for (const auto& f : files_)
    for (const SafetensorsEntry& e : f->entries()) out.push_back(&e);
  return out;
}

}  // namespace cairn::io
