// A fixture for the SSD tier through the engine: a fresh cache folder per test, engine options
// with or without it, a target request and a sharer that caches the target's first two pages.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "prefix/page_file.h"

namespace cairn::test {

class SsdFolderTest : public ::testing::Test {
 protected:
  explicit SsdFolderTest(const std::string& folder) : folder_(folder) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / (folder_ + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  EngineOptions options(bool ssd, int64_t cache_bytes = int64_t{64} << 20) {
    EngineOptions o;
    o.max_seqs = 4;
    o.prefix_cache_bytes = cache_bytes;
    o.model_fingerprint = "llama-fixture";
    if (ssd) o.ssd_cache_dir = dir_.string();
    log_.attach(o);
    return o;
  }
  Request target() { return test_request(test_prompt(90, 7, 256), 10, 0.9f, 42); }
  // Shares the target's first 70 tokens: two full pages of 32.
  Request sharer() {
    std::vector<int32_t> p = target().prompt_ids;
    p.resize(70);
    p.push_back(5);
    return test_request(p, 1, 0.9f, 1);
  }
  // The page files in the folder (not those set aside in quarantine).
  std::vector<std::filesystem::path> page_files() {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_))
      if (e.path().extension() == ".kvp" && e.path().parent_path().filename() != "quarantine")
        out.push_back(e.path());
    return out;
  }

  // A page file's header, whatever its namespace.
  static PageFileHeader header_of(const std::filesystem::path& f) {
    std::vector<uint8_t> head(kPageFileAlign);
    std::ifstream(f, std::ios::binary).read(reinterpret_cast<char*>(head.data()), 4096);
    PageFileHeader h;
    parse_page_header(head, -1, PageKey{}, h);
    return h;
  }

  // Flips a bit of the last byte of group 0 in every page file but the chain's
  // first: its header and first layers pass, its last layer fails its check.
  // Returns how many files it changed.
  int flip_last_layers() {
    int flipped = 0;
    for (const std::filesystem::path& f : page_files()) {
      const PageFileHeader h = header_of(f);
      if (h.parent.empty()) continue;  // the first page stays whole
      std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
      const auto at = static_cast<std::streamoff>(h.groups[0].offset + h.groups[0].bytes - 1);
      char c = 0;
      io.seekg(at);
      io.read(&c, 1);
      io.seekp(at);
      c = static_cast<char>(c ^ 0x20);
      io.write(&c, 1);
      ++flipped;
    }
    return flipped;
  }

  std::string folder_;
  std::filesystem::path dir_;
  LogitsLog log_;
};

}  // namespace cairn::test
