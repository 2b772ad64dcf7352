#include "prefix/disk_bandwidth.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "prefix/page_file_io.h"

namespace cairn {

double DiskReadFigures::best() const {
  return std::max({same_mb_s, seq_mb_s, wide_mb_s});
}

double odirect_read_mb_s(const std::string& path, int64_t size, int64_t request, int n) {
  std::atomic<int64_t> next{0};
  std::atomic<bool> refused{false};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int i = 0; i < std::max(n, 1); ++i)
    ts.emplace_back([&] {
      const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
      if (fd < 0) return refused.store(true);
      AlignedBytes buf(static_cast<size_t>(request));
      for (int64_t off; (off = next.fetch_add(request)) < size;)
        if (::pread(fd, buf.data(), static_cast<size_t>(request), off) <= 0) {
          refused.store(true);
          break;
        }
      ::close(fd);
    });
  for (std::thread& t : ts) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return refused.load() ? 0.0 : static_cast<double>(size) / 1e6 / s;
}

DiskReadFigures measure_disk_reads(const std::string& dir, int64_t bytes, int64_t request,
                                   int threads) {
  const std::string path = dir + "/cairn_disk_bandwidth.tmp";
  std::vector<uint8_t> block(size_t{8} << 20, 0x5a);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return {};
  for (int64_t done = 0; done < bytes; done += static_cast<int64_t>(block.size()))
    if (::write(fd, block.data(), block.size()) < 0) break;
  ::fsync(fd);
  ::close(fd);
  const int64_t aligned = (request + 4095) / 4096 * 4096;
  DiskReadFigures f;
  f.same_mb_s = odirect_read_mb_s(path, bytes, aligned, threads);
  f.seq_mb_s = odirect_read_mb_s(path, bytes, int64_t{8} << 20, 1);
  f.wide_mb_s = odirect_read_mb_s(path, bytes, int64_t{8} << 20, threads);
  ::unlink(path.c_str());
  return f;
}

}  // namespace cairn
