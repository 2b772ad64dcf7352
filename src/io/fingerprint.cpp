#include "io/fingerprint.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.h"

namespace cairn::io {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kWholeBytes = int64_t{64} << 20;
constexpr int64_t kEdgeBytes = int64_t{1} << 20;
constexpr int64_t kBlockBytes = int64_t{64} << 10;
constexpr int kBlocks = 64;

bool is_model_file(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext != ".md" && ext != ".png" && ext != ".txt";
}

void hash_range(XXH3_state_t* st, std::ifstream& in, int64_t offset, int64_t n,
                const std::string& name) {
  std::vector<char> buf(static_cast<size_t>(std::min<int64_t>(n, kEdgeBytes)));
  in.seekg(offset);
  while (n > 0) {
    const auto chunk = static_cast<std::streamsize>(std::min<int64_t>(n, buf.size()));
    if (!in.read(buf.data(), chunk))
      fail(ErrorCode::kIo, "{}: cannot read for its fingerprint", name);
    XXH3_128bits_update(st, buf.data(), static_cast<size_t>(chunk));
    n -= chunk;
  }
}

void hash_file(XXH3_state_t* st, const fs::path& p) {
  const std::string name = p.filename().string();
  const auto size = static_cast<int64_t>(fs::file_size(p));
  const std::string head = fmt::format("{}:{};", name, size);
  XXH3_128bits_update(st, head.data(), head.size());
  std::ifstream in(p, std::ios::binary);
  if (!in) fail(ErrorCode::kIo, "{}: cannot open for its fingerprint", p.string());
  if (size <= kWholeBytes) return hash_range(st, in, 0, size, p.string());
  hash_range(st, in, 0, kEdgeBytes, p.string());
  for (int b = 1; b <= kBlocks; ++b)
    hash_range(st, in, (size - kBlockBytes) / (kBlocks + 1) * b, kBlockBytes, p.string());
  hash_range(st, in, size - kEdgeBytes, kEdgeBytes, p.string());
}

}  // namespace

std::string model_fingerprint(const std::string& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const fs::directory_entry& e : fs::directory_iterator(path))
      if (e.is_regular_file() && is_model_file(e.path())) files.push_back(e.path());
  } else {
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  try {
    for (const fs::path& f : files) hash_file(st, f);
  } catch (...) {
    XXH3_freeState(st);
    throw;
  }
  const XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

}  // namespace cairn::io
