#include "prefix/checkpoint_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace cairn {

namespace {

constexpr size_t kMaxIssues = 256;
constexpr std::string_view kSuffix = ".ckpt";
constexpr size_t kMaxCheckpointBytes = size_t{1} << 30;

void make_dir(const std::string& d) {
  if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
    fail(ErrorCode::kIo, "checkpoints: mkdir {}: {}", d, std::strerror(errno));
}

bool parse_hex(std::string_view s, uint64_t& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() && end == s.data() + s.size();
}

// "<32 hex key>.<16 hex step>.ckpt" → key and step; false for any other name.
bool parse_name(const std::string& name, PageKey& key, int64_t& step) {
  if (name.size() != 32 + 1 + 16 + kSuffix.size() || !name.ends_with(kSuffix) || name[32] != '.')
    return false;
  uint64_t s = 0;
  if (!parse_hex(std::string_view(name).substr(0, 16), key.hi) ||
      !parse_hex(std::string_view(name).substr(16, 16), key.lo) ||
      !parse_hex(std::string_view(name).substr(33, 16), s) || s == 0 || s > (uint64_t{1} << 40))
    return false;
  step = static_cast<int64_t>(s);
  return true;
}

}  // namespace

CheckpointStore::CheckpointStore(const std::string& root, TierNamespace ns)
    : ns_(std::move(ns)), ns_key_(ns_.key()) {
  dir_ = root + "/" + page_key_hex(ns_key_);
  tmp_dir_ = dir_ + "/tmp";
  for (const std::string& d : {root, dir_, tmp_dir_}) make_dir(d);
  const std::string lock = dir_ + "/lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) fail(ErrorCode::kIo, "checkpoints: open {}: {}", lock, std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(lock_fd_);
    fail(ErrorCode::kIo, "checkpoints: {} is in use by another process ({})", dir_,
         std::strerror(e));
  }
  scan();
}

CheckpointStore::~CheckpointStore() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string CheckpointStore::path_of(const PageKey& key, int64_t step) const {
  return fmt::format("{}/{}.{:016x}{}", dir_, page_key_hex(key), step, kSuffix);
}

void CheckpointStore::reject_locked(const std::string& path, const PageFileCheck& c) {
  ++stats_.corrupt;
  ::unlink(path.c_str());
  std::fprintf(stderr, "cairn: generation checkpoint %s: %s (%s); removed\n", path.c_str(),
               page_file_error_name(c.error), c.detail.c_str());
  if (issues_.size() == kMaxIssues) issues_.erase(issues_.begin());
  issues_.push_back({path, c.error, c.detail, "removed"});
}

void CheckpointStore::forget_locked(const PageKey& key, int64_t step) {
  const auto it = index_.find(key);
  if (it == index_.end() || it->second.erase(step) == 0) return;
  --stats_.files;
  if (it->second.empty()) index_.erase(it);
}

void CheckpointStore::scan_file(const std::string& name) {
  const std::string path = dir_ + "/" + name;
  PageKey key;
  int64_t step = 0;
  if (!parse_name(name, key, step)) return;  // not a checkpoint's name: left alone
  AlignedBytes buf;
  const FileRead f = read_file_direct(path, kMaxCheckpointBytes, buf);
  if (!f.status.ok()) {
    issues_.push_back({path, PageFileError::kIo, f.status.what, "skipped"});
    return;
  }
  Checkpoint c;
  PageFileCheck check = decode_checkpoint_file(buf.span(), ns_key_, key, c);
  if (check.ok() && c.step() != step)
    check = {PageFileError::kWrongKey, "file name does not match its step"};
  if (!check.ok()) return reject_locked(path, check);
  index_[key][step] = static_cast<int64_t>(buf.size());
  ++stats_.files;
}

void CheckpointStore::scan() {
  std::lock_guard lock(mu_);
  std::error_code ec;
  for (const auto& de : std::filesystem::directory_iterator(tmp_dir_, ec))
    if (de.is_regular_file(ec) && ::unlink(de.path().c_str()) == 0) ++stats_.stray_temps;
  for (const auto& de : std::filesystem::directory_iterator(dir_, ec))
    if (de.is_regular_file(ec)) scan_file(de.path().filename().string());
}

bool CheckpointStore::contains(const PageKey& key) const {
  std::lock_guard lock(mu_);
  return index_.contains(key);
}

CheckpointRead CheckpointStore::find(const PageKey& key) {
  // A write or removal on the worker may unlink the newest file between the
  // index and the read: look again (a few times) when it is gone.
  for (int attempt = 0; attempt < 4; ++attempt) {
    int64_t step = 0;
    {
      std::lock_guard lock(mu_);
      const auto it = index_.find(key);
      if (it == index_.end()) return {std::nullopt, PageFileError::kMissing, "not indexed"};
      step = it->second.rbegin()->first;
    }
    const std::string path = path_of(key, step);
    AlignedBytes buf;
    const FileRead f = read_file_direct(path, kMaxCheckpointBytes, buf);
    if (!f.status.ok() && f.status.err == ENOENT) continue;
    if (!f.status.ok()) return {std::nullopt, PageFileError::kIo, f.status.what};
    CheckpointRead out;
    Checkpoint c;
    PageFileCheck check = decode_checkpoint_file(buf.span(), ns_key_, key, c);
    if (check.ok() && c.step() != step)
      check = {PageFileError::kWrongKey, "file name does not match its step"};
    std::lock_guard lock(mu_);
    if (!check.ok()) {
      forget_locked(key, step);
      reject_locked(path, check);
      return {std::nullopt, check.error, check.detail};
    }
    ++stats_.found;
    out.checkpoint = std::move(c);
    out.error = PageFileError::kNone;
    return out;
  }
  return {std::nullopt, PageFileError::kMissing, "removed while being read"};
}

IoStatus CheckpointStore::write(const Checkpoint& c) {
  encode_checkpoint_file(c, ns_, write_buf_);
  const int64_t step = c.step();
  const IoStatus s = write_file_durable(tmp_dir_, path_of(c.key, step), write_buf_);
  std::vector<int64_t> older;
  {
    std::lock_guard lock(mu_);
    if (!s.ok()) {
      ++stats_.write_failures;
      return s;
    }
    ++stats_.writes;
    Steps& steps = index_[c.key];
    if (!steps.contains(step)) ++stats_.files;
    steps[step] = static_cast<int64_t>(write_buf_.size());
    for (const auto& [st, bytes] : steps)
      if (st < step) older.push_back(st);
    for (int64_t st : older) forget_locked(c.key, st);
    stats_.removed += static_cast<int64_t>(older.size());
  }
  for (int64_t st : older) ::unlink(path_of(c.key, st).c_str());
  return s;
}

IoStatus CheckpointStore::remove(const PageKey& key) {
  std::vector<int64_t> steps;
  {
    std::lock_guard lock(mu_);
    const auto it = index_.find(key);
    if (it != index_.end())
      for (const auto& [st, bytes] : it->second) steps.push_back(st);
    for (int64_t st : steps) forget_locked(key, st);
    stats_.removed += static_cast<int64_t>(steps.size());
  }
  IoStatus s;
  for (int64_t st : steps) {
    const std::string path = path_of(key, st);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT && s.ok())
      s = {errno, fmt::format("unlink {}: {}", path, std::strerror(errno))};
  }
  if (s.ok() && !steps.empty()) s = fsync_dir(dir_);
  if (!s.ok()) {
    std::lock_guard lock(mu_);
    ++stats_.write_failures;
  }
  return s;
}

CheckpointStoreStats CheckpointStore::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<SsdIssue> CheckpointStore::issues() const {
  std::lock_guard lock(mu_);
  return issues_;
}

}  // namespace cairn
