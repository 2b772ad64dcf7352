// The weights of an HF model folder: the shards listed by
// model.safetensors.index.json, else model.safetensors, else every *.safetensors. Tensors
// come back as mmap'd views in their stored dtype; lookups check shape and dtype
// and name the file and tensor when they do not match.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace cairn::io {

// Called as bytes of weights are fetched: (done_bytes, total_bytes).
using ProgressFn = std::function<void(size_t done_bytes, size_t total_bytes)>;

class WeightStore {
 public:
  // Opens every shard of `folder`. Error(kBadFile) when there is none, when the
  // index names a missing file, or when a header is corrupt.
  static WeightStore open_folder(const std::string& folder);

  bool has(const std::string& name) const;
  // The tensor `name` with exactly `shape` in a float dtype (f32, bf16, f16).
  // Error(kBadFile) "FILE: tensor 'NAME' ..." when it is missing or mismatched.
  Tensor get(const std::string& name, const Shape& shape);
  // The file holding `name` (or the folder when it is missing), for messages.
  std::string file_of(const std::string& name) const;

  // Every entry of every shard, in file order.
  std::vector<const SafetensorsEntry*> entries() const;
  size_t total_bytes() const { return total_bytes_; }
  const std::string& folder() const { return folder_; }

  // Reports fetched bytes through `fn`; when `prefault`, get() reads one byte
  // per page of each tensor so the file is in memory once loading ends.
  void set_progress(ProgressFn fn, bool prefault);

 private:
  std::string folder_;
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::map<std::string, std::pair<size_t, const SafetensorsEntry*>> by_name_;
  size_t total_bytes_ = 0;
  size_t done_bytes_ = 0;
  ProgressFn progress_;
  bool prefault_ = false;
};

}  // namespace cairn::io
