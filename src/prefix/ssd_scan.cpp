// The SSD tier's start: the index rebuilt from the files' headers.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "prefix/ssd_tier.h"

namespace cairn {

namespace {

constexpr std::string_view kSuffix = ".kvp";

bool is_page_file(const std::string& name) {
  return name.size() > kSuffix.size() &&
         name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

}  // namespace

// Temporary files are writes a crash interrupted: never renamed, never served.
void SsdTier::scan_temps() {
  std::error_code ec;
  for (const auto& de : std::filesystem::directory_iterator(tmp_dir_, ec)) {
    if (!de.is_regular_file(ec)) continue;
    if (::unlink(de.path().c_str()) == 0) ++stats_.stray_temps;
  }
}

void SsdTier::scan_file(const std::string& name, std::vector<Found>& found) {
  const std::string path = dir_ + "/" + name;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  AlignedBytes bytes;
  const FileRead head = read_file_head(path, std::min<size_t>(st.st_size, kPageFileAlign), bytes);
  PageFileHeader h;
  PageFileCheck c;
  if (!head.status.ok()) {
    c = {PageFileError::kIo, head.status.what};
  } else {
    c = parse_page_header(bytes.span(), st.st_size, ns_key_, h);
    uint32_t header_bytes = 0;  // a header longer than one block: read it whole
    if (bytes.size() >= 16) std::memcpy(&header_bytes, bytes.span().data() + 12, 4);
    if (c.error == PageFileError::kTruncated && header_bytes > bytes.size() &&
        header_bytes <= static_cast<uint64_t>(st.st_size)) {
      const FileRead again = read_file_head(path, header_bytes, bytes);
      c = again.status.ok() ? parse_page_header(bytes.span(), st.st_size, ns_key_, h)
                            : PageFileCheck{PageFileError::kIo, again.status.what};
    }
  }
  if (c.ok() && name != page_key_hex(h.key) + std::string(kSuffix))
    c = {PageFileError::kWrongKey, "file name does not match its key"};
  if (c.error == PageFileError::kWrongNamespace || c.error == PageFileError::kIo) {
    note_issue_locked({path, c.error, c.detail, "skipped"});  // not ours, or unreadable now
    return;
  }
  if (!c.ok()) return set_aside_locked(path, c.error, c.detail);
  const int64_t mtime = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  found.push_back({mtime, h.key, {st.st_size, h.parent, 0}});
}

void SsdTier::scan() {
  std::lock_guard lock(mu_);
  scan_temps();
  std::error_code ec;
  for (const auto& de : std::filesystem::directory_iterator(quarantine_dir_, ec))
    if (de.is_regular_file(ec)) ++stats_.quarantined;
  std::vector<Found> found;
  for (const auto& de : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = de.path().filename().string();
    if (is_page_file(name)) scan_file(name, found);
  }
  // Oldest written first: the LRU order after a restart is the write order.
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.mtime_ns < b.mtime_ns; });
  for (const Found& f : found) insert_locked(f.key, f.entry);
  for (const std::string& v : evict_locked(0)) ::unlink(v.c_str());
}

}  // namespace cairn
