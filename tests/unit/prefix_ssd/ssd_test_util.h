// Page records with random bytes, temporary directories and file surgery for
// the SSD tier's tests.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "prefix/page_file.h"
#include "prefix/page_key.h"

namespace cairn::test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/cairn_ssd_XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << tmpl;
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline TierNamespace test_ns(const std::string& fp = "model-a") {
  return {fp, "bf16", "prefix"};
}

struct RecordShape {
  int64_t page_tokens = 16;
  std::vector<int64_t> group_bytes{4096, 1536};  // [n_groups]; sizes of present pages
  std::vector<int32_t> windows{0, 64};
  std::vector<bool> absent{false, false};
  bool quantized = false;
  int64_t min_reusable = 0;
};

// A record of the page after `parent` over random tokens, its bytes random.
inline PageRecord make_record(std::mt19937& rng, const TierNamespace& ns, const PageKey& parent,
                              const RecordShape& s = {}) {
  PageRecord r;
  r.parent = parent;
  for (int64_t i = 0; i < s.page_tokens; ++i)
    r.tokens.push_back(static_cast<int32_t>(rng() % 50000));
  r.key = page_key(ns.key(), parent, r.tokens);
  r.quantized = s.quantized;
  r.min_reusable = s.min_reusable;
  auto store = std::make_shared<std::vector<std::vector<uint8_t>>>();
  for (size_t g = 0; g < s.group_bytes.size(); ++g) {
    store->emplace_back();
    if (!s.absent[g])
      for (int64_t i = 0; i < s.group_bytes[g]; ++i)
        store->back().push_back(static_cast<uint8_t>(rng()));
    r.groups.push_back({s.windows[g], store->back()});
  }
  r.owner = store;
  return r;
}

inline bool same_bytes(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

inline void expect_same(const PageRecord& a, const PageRecord& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.parent, b.parent);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.quantized, b.quantized);
  EXPECT_EQ(a.min_reusable, b.min_reusable);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t g = 0; g < a.groups.size(); ++g) {
    EXPECT_EQ(a.groups[g].window, b.groups[g].window) << "group " << g;
    EXPECT_EQ(a.groups[g].bytes.size(), b.groups[g].bytes.size()) << "group " << g;
    EXPECT_TRUE(same_bytes(a.groups[g].bytes, b.groups[g].bytes)) << "group " << g;
  }
}

inline std::vector<uint8_t> read_all(const std::string& path) {
  std::vector<uint8_t> out(std::filesystem::file_size(path));
  const int fd = ::open(path.c_str(), O_RDONLY);
  EXPECT_EQ(::pread(fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
  ::close(fd);
  return out;
}

// XORs one byte of a file in place.
inline void flip_byte(const std::string& path, uint64_t offset, uint8_t mask = 0x10) {
  const int fd = ::open(path.c_str(), O_RDWR);
  uint8_t b = 0;
  ASSERT_EQ(::pread(fd, &b, 1, static_cast<off_t>(offset)), 1) << path;
  b ^= mask;
  ASSERT_EQ(::pwrite(fd, &b, 1, static_cast<off_t>(offset)), 1);
  ::close(fd);
}

inline void write_all(const std::string& path, const std::vector<uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

}  // namespace cairn::test
