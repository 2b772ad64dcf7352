// Reads of a page file in parts, for layer-wise restores: the header first,
// then the segments of whichever layers the restore wants next, each checked
// before its bytes are handed on (docs/durability.md, format version 2).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "prefix/ssd_tier.h"

namespace cairn {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

size_t round_up(size_t x, size_t a) {
  return (x + a - 1) / a * a;
}

PageFileCheck io_check(const IoStatus& s) {
  return {s.err == ENOENT ? PageFileError::kMissing : PageFileError::kIo, s.what};
}

// Reads the file's first bytes into page.head: head_bytes, or the whole header
// when it says it is longer.
PageFileCheck read_head(SsdPage& page, size_t head_bytes) {
  IoStatus s =
      page.file.read(0, round_up(std::max(head_bytes, kPageFileAlign), kPageFileAlign), page.head);
  if (!s.ok()) return io_check(s);
  uint32_t header_bytes = 0;
  if (page.head.size() >= 16) std::memcpy(&header_bytes, page.head.data() + 12, 4);
  if (header_bytes > page.head.size() && header_bytes <= (1u << 26) &&
      header_bytes <= static_cast<uint64_t>(page.file.size())) {
    s = page.file.read(0, round_up(header_bytes, kPageFileAlign), page.head);
    if (!s.ok()) return io_check(s);
  }
  page.bytes_read += static_cast<int64_t>(page.head.size());
  return {};
}

// File bytes [from, from + n) to out: from the head when it holds them, else
// the whole 4 KiB blocks straight into out when it is aligned, the rest (or
// all) through buf.
PageFileCheck read_span(SsdPage& page, uint64_t from, uint64_t n, uint8_t* out, AlignedBytes& buf) {
  if (from + n <= page.head.size()) {
    std::memcpy(out, page.head.data() + from, n);
    return {};
  }
  const bool aligned = reinterpret_cast<uintptr_t>(out) % kPageFileAlign == 0;
  const uint64_t direct = aligned ? n / kPageFileAlign * kPageFileAlign : 0;
  size_t got = 0;
  if (direct > 0) {
    const IoStatus s = page.file.read_into(from, direct, out, got);
    if (!s.ok()) return io_check(s);
    page.bytes_read += static_cast<int64_t>(got);
    if (got < direct) return {PageFileError::kTruncated, "page file cut short"};
  }
  if (direct == n) return {};
  const IoStatus s = page.file.read(from + direct, round_up(n - direct, kPageFileAlign), buf);
  if (!s.ok()) return io_check(s);
  page.bytes_read += static_cast<int64_t>(buf.size());
  if (buf.size() < n - direct) return {PageFileError::kTruncated, "page file cut short"};
  std::memcpy(out + direct, buf.data(), n - direct);
  return {};
}

}  // namespace

PageFileCheck SsdTier::open_page(const PageKey& key, size_t head_bytes, SsdPage& out) {
  {
    std::lock_guard lock(mu_);
    if (!index_.contains(key))
      return ++stats_.misses, PageFileCheck{PageFileError::kMissing, "not indexed"};
  }
  const auto t0 = std::chrono::steady_clock::now();
  out.key = key;
  const IoStatus s = out.file.open(path_of(key));
  PageFileCheck c = s.ok() ? read_head(out, head_bytes) : io_check(s);
  if (c.ok()) c = parse_page_header(out.head.span(), out.file.size(), ns_key_, out.header);
  if (c.ok() && out.header.key != key)
    c = {PageFileError::kWrongKey, "the file holds another page"};
  out.seconds += seconds_since(t0);
  if (!c.ok()) finish_page(out, c);
  return c;
}

PageFileCheck SsdTier::read_part(SsdPage& page, size_t g, uint64_t first, uint64_t last,
                                 uint8_t* dst, AlignedBytes& buf) {
  const PageFileHeader::Group& e = page.header.groups.at(g);
  if (first >= last) return {};
  if (last > e.checksums.size())
    return {PageFileError::kBadHeader,
            fmt::format("group {} holds {} segments, not {}", g, e.checksums.size(), last)};
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t at = first * e.segment_bytes;
  const uint64_t n = std::min(last * e.segment_bytes, e.bytes) - at;
  const PageFileCheck c = read_span(page, e.offset + at, n, dst + at, buf);
  page.seconds += seconds_since(t0);
  if (!c.ok()) return c;
  return check_segments(page.header, g, first, last, {dst + at, n});
}

void SsdTier::finish_page(const SsdPage& page, const PageFileCheck& check) {
  settle_read(page.key, check, page.bytes_read, page.seconds,
              page.file.size() > 0 && !page.file.direct());
}

}  // namespace cairn
