// The disk side of page files: durable writes (temporary file, fsync, rename,
// directory fsync) and O_DIRECT reads into aligned buffers, falling back to
// buffered reads where a file system refuses O_DIRECT. Errors come back as
// values (errno and a message naming the call and path), never as exceptions.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>

namespace cairn {

struct IoStatus {
  int err = 0;       // errno of the failing call; 0: success
  std::string what;  // "fsync /dir/tmp/x: No space left on device"
  bool ok() const { return err == 0; }
};

// Writes bytes to a new file in tmp_dir, fsyncs it, renames it to path and
// fsyncs path's directory (unless sync_dir is false: the caller fsyncs it
// once after several renames). On failure the temporary file is removed and
// path is untouched (an older file there stays whole).
IoStatus write_file_durable(const std::string& tmp_dir, const std::string& path,
                            std::span<const uint8_t> bytes, bool sync_dir = true);

// fsync of a directory (after a rename or an unlink in it).
IoStatus fsync_dir(const std::string& dir);

// Bytes in memory aligned to kPageFileAlign (what O_DIRECT asks of buffers).
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(size_t capacity) { reserve(capacity); }
  // Makes room for n bytes (reallocating, contents lost, when capacity is less).
  void reserve(size_t n);
  uint8_t* data() { return p_.get(); }
  std::span<const uint8_t> span() const { return {p_.get(), size_}; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  void set_size(size_t n) { size_ = n; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> p_;
  size_t size_ = 0, capacity_ = 0;
};

struct FileRead {
  IoStatus status;      // err ENOENT: no such file
  bool direct = false;  // false: O_DIRECT was refused and a buffered read served
};

// A file open for reads at aligned offsets, with O_DIRECT where the file
// system allows (buffered where it refuses, at open or at the first read).
class DirectFile {
 public:
  DirectFile() = default;
  ~DirectFile();
  DirectFile(const DirectFile&) = delete;
  DirectFile& operator=(const DirectFile&) = delete;
  // err ENOENT: no such file.
  IoStatus open(const std::string& path);
  int64_t size() const { return size_; }  // at open
  bool direct() const { return direct_; }
  // Replaces into's bytes with [offset, offset + n) of the file (fewer at its
  // end); offset a multiple of kPageFileAlign.
  IoStatus read(uint64_t offset, size_t n, AlignedBytes& into);
  // The same into memory of the caller's: out and n multiples of kPageFileAlign
  // (O_DIRECT reads straight into it). got: the bytes read.
  IoStatus read_into(uint64_t offset, size_t n, uint8_t* out, size_t& got);

 private:
  int fd_ = -1;
  int64_t size_ = 0;
  bool direct_ = false;
  std::string path_;
};

// Reads a whole file into `into` (at most max_bytes; a longer one is read to
// max_bytes + 1 so the caller sees it is too long), with O_DIRECT when the
// file system allows. `into` is reused when large enough: fresh memory costs
// page faults, which on some machines cost more than the disk.
FileRead read_file_direct(const std::string& path, size_t max_bytes, AlignedBytes& into);

// Reads up to n bytes from the start of a file (buffered: headers at scan).
FileRead read_file_head(const std::string& path, size_t n, AlignedBytes& into);

}  // namespace cairn
