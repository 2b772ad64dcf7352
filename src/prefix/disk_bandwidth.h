// The disk's own read bandwidth, measured where the SSD tier lives, so that a
// restore's MB/s is printed against the limit it chases (DESIGN.md §6): one
// file written and fsynced, then read with O_DIRECT (no page cache) in
// requests of a given size, several in flight.
#pragma once

#include <cstdint>
#include <string>

namespace cairn {

struct DiskReadFigures {
  double same_mb_s = 0;  // requests of `request` bytes, `threads` in flight
  double seq_mb_s = 0;   // 8 MiB requests, one in flight
  double wide_mb_s = 0;  // 8 MiB requests, `threads` in flight
  double best() const;
};

// Writes `bytes` into a scratch file in dir (removed after), then reads it
// three ways. Zero figures when O_DIRECT is refused there.
DiskReadFigures measure_disk_reads(const std::string& dir, int64_t bytes, int64_t request,
                                   int threads);

// MB/s of reading [0, size) of path with O_DIRECT in requests of `request`
// bytes, n threads taking requests in turn; 0 when O_DIRECT is refused.
double odirect_read_mb_s(const std::string& path, int64_t size, int64_t request, int n);

}  // namespace cairn
