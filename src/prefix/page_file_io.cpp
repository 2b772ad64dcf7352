#include "prefix/page_file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "prefix/page_file.h"

namespace cairn {

namespace {

IoStatus sys_error(const char* call, const std::string& path) {
  const int e = errno;
  return {e, fmt::format("{} {}: {}", call, path, std::strerror(e))};
}

// A name no other writer (thread or process) of this directory picks.
std::string unique_name() {
  static std::atomic<uint64_t> counter{0};
  const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  return fmt::format("{}.{}.{:x}.tmp", ::getpid(), counter.fetch_add(1), ns);
}

IoStatus write_all(int fd, std::span<const uint8_t> bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return sys_error("write", path);
    if (n == 0) return {EIO, fmt::format("write {}: wrote nothing", path)};
    done += static_cast<size_t>(n);
  }
  return {};
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

size_t round_up(size_t x, size_t a) {
  return (x + a - 1) / a * a;
}

// Reads [offset, offset + want) of fd into out (capacity round_up(want,
// kPageFileAlign)) in requests of at most chunk bytes; returns bytes read (fewer
// at the file's end), or -1 with errno set.
ssize_t read_upto(int fd, uint8_t* out, uint64_t offset, size_t want, size_t chunk) {
  size_t got = 0;
  while (got < want) {
    const ssize_t n = ::pread(fd, out + got, std::min(chunk, round_up(want - got, kPageFileAlign)),
                              static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(std::min(got, want));
}

}  // namespace

IoStatus fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error("open", dir);
  IoStatus s;
  if (::fsync(fd) != 0) s = sys_error("fsync", dir);
  ::close(fd);
  return s;
}

IoStatus write_file_durable(const std::string& tmp_dir, const std::string& path,
                            std::span<const uint8_t> bytes, bool sync_dir) {
  const std::string tmp = tmp_dir + "/" + unique_name();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return sys_error("open", tmp);
  IoStatus s = write_all(fd, bytes, tmp);
  if (s.ok() && ::fsync(fd) != 0) s = sys_error("fsync", tmp);
  if (::close(fd) != 0 && s.ok()) s = sys_error("close", tmp);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = sys_error("rename", tmp);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return sync_dir ? fsync_dir(dir_of(path)) : s;
}

void AlignedBytes::reserve(size_t n) {
  size_ = 0;
  if (n <= capacity_ && p_) return;
  const size_t cap = round_up(std::max<size_t>(n, 1), kPageFileAlign);
  void* p = std::aligned_alloc(kPageFileAlign, cap);
  if (p == nullptr) throw std::bad_alloc();
  p_.reset(static_cast<uint8_t*>(p));
  capacity_ = cap;
}

DirectFile::~DirectFile() {
  if (fd_ >= 0) ::close(fd_);
}

IoStatus DirectFile::open(const std::string& path) {
  if (fd_ >= 0) ::close(fd_);
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  direct_ = fd_ >= 0;
  if (fd_ < 0 && errno == EINVAL) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return sys_error("open", path);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    IoStatus s = sys_error("fstat", path);
    ::close(fd_);
    fd_ = -1;
    return s;
  }
  size_ = st.st_size;
  return {};
}

IoStatus DirectFile::read_into(uint64_t offset, size_t n, uint8_t* out, size_t& got) {
  constexpr size_t kChunk = size_t{8} << 20;  // one request of 8 MiB at a time
  ssize_t r = read_upto(fd_, out, offset, n, kChunk);
  if (r < 0 && errno == EINVAL && direct_) {  // O_DIRECT accepted at open, refused at read
    ::close(fd_);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    direct_ = false;
    r = fd_ < 0 ? -1 : read_upto(fd_, out, offset, n, kChunk);
  }
  if (r < 0) return sys_error("pread", path_);
  got = static_cast<size_t>(r);
  return {};
}

IoStatus DirectFile::read(uint64_t offset, size_t n, AlignedBytes& into) {
  into.reserve(n);
  size_t got = 0;
  IoStatus s = read_into(offset, n, into.data(), got);
  into.set_size(got);
  return s;
}

FileRead read_file_direct(const std::string& path, size_t max_bytes, AlignedBytes& into) {
  DirectFile f;
  FileRead r;
  r.status = f.open(path);
  if (r.status.ok())
    r.status = f.read(0, std::min(static_cast<size_t>(f.size()), max_bytes + 1), into);
  r.direct = f.direct();
  return r;
}

FileRead read_file_head(const std::string& path, size_t n, AlignedBytes& into) {
  FileRead r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    r.status = sys_error("open", path);
    return r;
  }
  into.reserve(n);
  const ssize_t got = read_upto(fd, into.data(), 0, n, n);
  if (got < 0)
    r.status = sys_error("pread", path);
  else
    into.set_size(static_cast<size_t>(got));
  ::close(fd);
  return r;
}

}  // namespace cairn
