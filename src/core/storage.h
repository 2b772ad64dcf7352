// Tensor storage: owned host memory, borrowed slices of a memory-mapped file, or
// (with the CUDA backend) device memory. Always held by shared_ptr: a tensor
// view keeps its storage alive, and nothing is freed by hand.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace cairn {

enum class DeviceKind : uint8_t { kCpu, kCuda };

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  bool operator==(const Device&) const = default;
  static Device cpu() { return {}; }
};

class Storage {
 public:
  virtual ~Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t size_bytes() const { return size_bytes_; }
  Device device() const { return device_; }

 protected:
  Storage(void* data, size_t size_bytes, Device device)
      : data_(data), size_bytes_(size_bytes), device_(device) {}

 private:
  void* data_;
  size_t size_bytes_;
  Device device_;
};

// Host memory aligned to 64 bytes (a cache line; enough for AVX-512 loads).
std::shared_ptr<Storage> allocate_host(size_t size_bytes);

// Storage over host memory the caller owns and keeps alive while the storage
// (and every tensor viewing it) is used: a transfer's source or destination.
std::shared_ptr<Storage> borrow_host(void* data, size_t size_bytes);

// A read-only memory map of a whole file. Throws Error(kIo) naming the path.
class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size_bytes() const { return size_bytes_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size_bytes)
      : path_(std::move(path)), data_(data), size_bytes_(size_bytes) {}
  std::string path_;
  const uint8_t* data_;
  size_t size_bytes_;
};

// Storage borrowing [offset, offset + size) of a mapped file; keeps the map alive.
std::shared_ptr<Storage> borrow_mapped(std::shared_ptr<MappedFile> file, size_t offset,
                                       size_t size_bytes);

}  // namespace cairn
