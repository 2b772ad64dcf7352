#include "core/storage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace cairn {
namespace {

constexpr size_t kHostAlignment = 64;

class HostStorage final : public Storage {
 public:
  HostStorage(void* data, size_t size_bytes) : Storage(data, size_bytes, Device::cpu()) {}
  ~HostStorage() override { std::free(data()); }
};

class BorrowedStorage final : public Storage {
 public:
  BorrowedStorage(void* data, size_t size_bytes) : Storage(data, size_bytes, Device::cpu()) {}
};

class MappedStorage final : public Storage {
 public:
  MappedStorage(std::shared_ptr<MappedFile> file, size_t offset, size_t size_bytes)
      : Storage(const_cast<uint8_t*>(file->data()) + offset, size_bytes, Device::cpu()),
        file_(std::move(file)) {}

 private:
  std::shared_ptr<MappedFile> file_;
};

}  // namespace

std::shared_ptr<Storage> allocate_host(size_t size_bytes) {
  size_t rounded = (size_bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  if (rounded == 0) rounded = kHostAlignment;
  void* p = std::aligned_alloc(kHostAlignment, rounded);
  if (p == nullptr) fail(ErrorCode::kOutOfMemory, "host allocation of {} bytes failed", size_bytes);
  return std::make_shared<HostStorage>(p, size_bytes);
}

std::shared_ptr<Storage> borrow_host(void* data, size_t size_bytes) {
  return std::make_shared<BorrowedStorage>(data, size_bytes);
}

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::kIo, "{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail(ErrorCode::kIo, "{}: cannot stat: {}", path, std::strerror(e));
  }
  size_t size = static_cast<size_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      fail(ErrorCode::kIo, "{}: cannot mmap: {}", path, std::strerror(e));
    }
    data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return std::shared_ptr<MappedFile>(new MappedFile(path, data, size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_bytes_);
}

std::shared_ptr<Storage> borrow_mapped(std::shared_ptr<MappedFile> file, size_t offset,
                                       size_t size_bytes) {
  CAIRN_CHECK(offset + size_bytes <= file->size_bytes(), "slice past the end of {}", file->path());
  return std::make_shared<MappedStorage>(std::move(file), offset, size_bytes);
}

}  // namespace cairn
