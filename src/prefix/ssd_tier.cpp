#include "prefix/ssd_tier.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "prefix/page_key.h"

namespace cairn {

namespace {

constexpr size_t kMaxIssues = 256;

void make_dir(const std::string& d) {
  if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
    fail(ErrorCode::kIo, "ssd cache: mkdir {}: {}", d, std::strerror(errno));
}

}  // namespace

std::string page_key_hex(const PageKey& k) {
  return fmt::format("{:016x}{:016x}", k.hi, k.lo);
}

SsdTier::SsdTier(const std::string& root, int64_t max_bytes, TierNamespace ns,
                 SsdTierOptions options)
    : root_(root),
      max_bytes_(max_bytes),
      ns_(std::move(ns)),
      ns_key_(ns_.key()),
      options_(options) {
  if (max_bytes <= 0) fail(ErrorCode::kInvalidArgument, "ssd cache: max_bytes {} ≤ 0", max_bytes);
  dir_ = root_ + "/" + page_key_hex(ns_key_);
  tmp_dir_ = dir_ + "/tmp";
  quarantine_dir_ = dir_ + "/quarantine";
  for (const std::string* d : {&root_, &dir_, &tmp_dir_, &quarantine_dir_}) make_dir(*d);
  const std::string lock = dir_ + "/lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) fail(ErrorCode::kIo, "ssd cache: open {}: {}", lock, std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(lock_fd_);
    fail(ErrorCode::kIo, "ssd cache: {} is in use by another process ({})", dir_, std::strerror(e));
  }
  stats_.max_bytes = max_bytes_;
  scan();
}

SsdTier::~SsdTier() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

std::string SsdTier::path_of(const PageKey& key) const {
  return dir_ + "/" + page_key_hex(key) + ".kvp";
}

bool SsdTier::contains(const PageKey& key) const {
  std::lock_guard lock(mu_);
  return index_.contains(key);
}

bool SsdTier::touch(const PageKey& key) {
  std::lock_guard lock(mu_);
  const auto it = index_.find(key);
  if (it == index_.end()) return false;
  touch_locked(it);
  return true;
}

std::vector<PageKey> SsdTier::match_chain(const PageKey& parent, std::span<const int32_t> tokens,
                                          int64_t page_tokens, int64_t max_pages) const {
  std::vector<PageKey> chain;
  if (page_tokens <= 0) return chain;
  const int64_t n = std::min<int64_t>(max_pages, static_cast<int64_t>(tokens.size()) / page_tokens);
  PageKey last = parent;
  std::lock_guard lock(mu_);
  for (int64_t i = 0; i < n; ++i) {
    last = page_key(
        ns_key_, last,
        tokens.subspan(static_cast<size_t>(i * page_tokens), static_cast<size_t>(page_tokens)));
    if (!index_.contains(last)) break;
    chain.push_back(last);
  }
  return chain;
}

void SsdTier::insert_locked(const PageKey& key, const Entry& e) {
  Entry& slot = index_[key];
  slot = e;
  slot.tick = ++tick_;
  lru_.emplace(slot.tick, key);
  ++children_[e.parent];
  stats_.files += 1;
  stats_.bytes += e.bytes;
}

void SsdTier::erase_locked(Index::iterator it) {
  const Entry& e = it->second;
  lru_.erase(e.tick);
  const auto c = children_.find(e.parent);
  if (c != children_.end() && --c->second == 0) children_.erase(c);
  stats_.files -= 1;
  stats_.bytes -= e.bytes;
  index_.erase(it);
}

void SsdTier::touch_locked(Index::iterator it) {
  lru_.erase(it->second.tick);
  it->second.tick = ++tick_;
  lru_.emplace(it->second.tick, it->first);
}

std::vector<std::string> SsdTier::evict_locked(int64_t need) {
  std::vector<std::string> victims;
  while (!lru_.empty() && stats_.bytes + need > max_bytes_) {
    auto pick = lru_.begin();  // the oldest leaf (no indexed child), else the oldest
    for (auto it = lru_.begin(); it != lru_.end(); ++it)
      if (!children_.contains(it->second)) {
        pick = it;
        break;
      }
    victims.push_back(path_of(pick->second));
    erase_locked(index_.find(pick->second));
    ++stats_.evictions;
  }
  return victims;
}

void SsdTier::note_issue_locked(SsdIssue issue) {
  if (issues_.size() == kMaxIssues) issues_.erase(issues_.begin());
  issues_.push_back(std::move(issue));
}

// Moves a failing file into quarantine/ (or removes it), and logs it.
void SsdTier::set_aside_locked(const std::string& path, PageFileError e,
                               const std::string& detail) {
  ++stats_.corrupt;
  std::string action = "removed";
  const std::string name = path.substr(path.rfind('/') + 1);
  if (options_.quarantine && stats_.quarantined < options_.max_quarantined &&
      ::rename(path.c_str(), (quarantine_dir_ + "/" + name).c_str()) == 0) {
    action = "quarantined";
    ++stats_.quarantined;
  } else {
    ::unlink(path.c_str());
  }
  note_issue_locked({path, e, detail, action});
}

SsdRead SsdTier::read(const PageKey& key) {
  int64_t expect = 0;
  {
    std::lock_guard lock(mu_);
    const auto it = index_.find(key);
    if (it == index_.end())
      return ++stats_.misses, SsdRead{std::nullopt, PageFileError::kMissing, "not indexed"};
    expect = it->second.bytes;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<AlignedBytes> buf = read_buffers_.acquire(static_cast<size_t>(expect) + 1);
  const FileRead f = read_file_direct(path_of(key), static_cast<size_t>(expect), *buf);
  PageFileCheck check;
  PageRecord rec;
  if (!f.status.ok())
    check = {f.status.err == ENOENT ? PageFileError::kMissing : PageFileError::kIo, f.status.what};
  else
    check = decode_page_file(buf->span(), ns_key_, key, rec);
  rec.owner = buf;
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  settle_read(key, check, static_cast<int64_t>(buf->size()), dt, f.status.ok() && !f.direct);
  SsdRead out;
  if (check.ok()) out.record = std::move(rec);
  out.error = check.error;
  out.detail = check.detail;
  return out;
}

// A read's end: counted, and a file that failed a check is never served again.
void SsdTier::settle_read(const PageKey& key, const PageFileCheck& check, int64_t bytes,
                          double seconds, bool buffered) {
  const std::string path = path_of(key);
  std::lock_guard lock(mu_);
  if (buffered) ++stats_.buffered_reads;
  const auto it = index_.find(key);
  if (check.ok()) {
    ++stats_.hits;
    stats_.restore_bytes += bytes;
    stats_.restore_seconds += seconds;
    if (it != index_.end()) touch_locked(it);
    return;
  }
  ++stats_.misses;
  if (check.error == PageFileError::kIo || it == index_.end()) return;
  erase_locked(it);  // gone or failing: never served again
  if (check.error == PageFileError::kWrongNamespace) {
    ++stats_.corrupt;  // another namespace's file under our name: left alone
    note_issue_locked({path, check.error, check.detail, "skipped"});
  } else if (check.error != PageFileError::kMissing) {
    set_aside_locked(path, check.error, check.detail);
  }
}

IoStatus SsdTier::sync_dir() {
  return fsync_dir(dir_);
}

IoStatus SsdTier::write(const PageRecord& r, bool sync_dir) {
  std::lock_guard wlock(write_mu_);
  {
    std::lock_guard lock(mu_);
    const auto it = index_.find(r.key);
    if (it != index_.end()) return touch_locked(it), IoStatus{};
  }
  std::vector<uint8_t>& bytes = write_buf_;
  encode_page_file(r, ns_, bytes);
  const auto size = static_cast<int64_t>(bytes.size());
  std::vector<std::string> victims;
  {
    std::lock_guard lock(mu_);
    if (size > max_bytes_) {
      ++stats_.write_failures;
      return {EFBIG, fmt::format("page file of {} bytes exceeds the cap {}", size, max_bytes_)};
    }
    victims = evict_locked(size);
  }
  for (const std::string& v : victims) ::unlink(v.c_str());
  const IoStatus s = write_file_durable(tmp_dir_, path_of(r.key), bytes, sync_dir);
  std::lock_guard lock(mu_);
  if (!s.ok()) {
    ++stats_.write_failures;
    return s;
  }
  ++stats_.writes;
  stats_.write_bytes += size;
  insert_locked(r.key, {size, r.parent, 0});
  return s;
}

SsdTierStats SsdTier::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<SsdIssue> SsdTier::issues() const {
  std::lock_guard lock(mu_);
  return issues_;
}

}  // namespace cairn
