#include "prefix/page_file.h"

#include <xxhash.h>

#include <cstring>

#include "core/error.h"
#include "prefix/buffer_pool.h"
#include "prefix/le_codec.h"
#include "prefix/page_key.h"

namespace cairn {

namespace {

using le::Reader;
using le::round_up;
using le::Writer;

constexpr char kMagic[8] = {'C', 'A', 'I', 'R', 'N', 'K', 'V', 'P'};
constexpr size_t kFixedBytes = 120;  // through the reserved u32 after the string lengths
constexpr size_t kGroupEntryBytes = 32;
constexpr uint64_t kPayloadAlign =
    kPageFileAlign;  // a group's bytes start a block: ranged O_DIRECT reads
// Bounds a header must respect before anything is allocated from it.
constexpr int64_t kMaxPageTokens = int64_t{1} << 20;
constexpr uint32_t kMaxGroups = 1024, kMaxString = 4096, kMaxSegments = 1u << 16;
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 34;

PageFileCheck bad(PageFileError e, std::string detail) {
  return {e, std::move(detail)};
}

std::string key_hex(const PageKey& k) {
  return fmt::format("{:016x}{:016x}", k.hi, k.lo);
}

// One group table entry's segment fields against its bytes.
PageFileCheck check_group_entry(const PageFileHeader::Group& g, uint32_t present,
                                uint32_t n_segments, size_t index) {
  if (present > 1 || (present == 0) != (g.bytes == 0))
    return bad(PageFileError::kBadHeader, "group present flag and bytes disagree");
  const bool segments_fit =
      g.bytes == 0 ? g.segment_bytes == 0 && n_segments == 0
                   : g.segment_bytes > 0 && g.segment_bytes % kPageFileAlign == 0 &&
                         n_segments == (g.bytes + g.segment_bytes - 1) / g.segment_bytes;
  if (!segments_fit || n_segments > kMaxSegments)
    return bad(PageFileError::kBadHeader, fmt::format("group {} segments do not fit", index));
  return {};
}

// Fields after the fixed part: strings, tokens, group table, segment checksums.
// Sizes are bounded before anything is allocated from them.
PageFileCheck read_variable(Reader& r, uint32_t n_groups, const uint32_t lens[3],
                            PageFileHeader& h) {
  h.fingerprint = r.str(lens[0]);
  h.scheme = r.str(lens[1]);
  h.tag = r.str(lens[2]);
  r.align(4);
  h.tokens.resize(static_cast<size_t>(h.page_tokens));
  for (int32_t& t : h.tokens) t = static_cast<int32_t>(r.u32());
  r.align(8);
  h.groups.resize(n_groups);
  std::vector<uint32_t> n_segments(n_groups);
  for (size_t i = 0; i < h.groups.size(); ++i) {
    PageFileHeader::Group& g = h.groups[i];
    g.window = static_cast<int32_t>(r.u32());
    const uint32_t present = r.u32();
    g.bytes = r.u64(), g.offset = r.u64();
    g.segment_bytes = r.u32();
    n_segments[i] = r.u32();
    if (r.short_read()) break;
    PageFileCheck c = check_group_entry(g, present, n_segments[i], i);
    if (!c.ok()) return c;
  }
  for (size_t i = 0; i < h.groups.size() && !r.short_read(); ++i) {
    h.groups[i].checksums.resize(n_segments[i]);
    for (uint64_t& c : h.groups[i].checksums) c = r.u64();
  }
  if (r.short_read()) return bad(PageFileError::kTruncated, "header shorter than its fields");
  return {};
}

// Group payloads must lie in [payload_offset, file_bytes), aligned, in order.
PageFileCheck check_layout(const PageFileHeader& h, uint64_t payload_offset) {
  uint64_t end = payload_offset;
  for (size_t g = 0; g < h.groups.size(); ++g) {
    const PageFileHeader::Group& e = h.groups[g];
    if (e.bytes == 0) continue;
    if (e.offset < end || e.offset % kPayloadAlign != 0 || e.bytes > kMaxFileBytes ||
        e.offset + e.bytes > h.file_bytes)
      return bad(PageFileError::kBadHeader, fmt::format("group {} offset/bytes out of place", g));
    end = e.offset + e.bytes;
  }
  if (end != h.file_bytes)
    return bad(PageFileError::kBadHeader,
               fmt::format("file_bytes {} != payload end {}", h.file_bytes, end));
  return {};
}

PageFileCheck check_identity(const PageFileHeader& h, const PageKey& expect_ns) {
  if (h.ns != expect_ns)
    return bad(PageFileError::kWrongNamespace,
               fmt::format("namespace {} (fingerprint '{}', scheme '{}', tag '{}')", key_hex(h.ns),
                           h.fingerprint, h.scheme, h.tag));
  if (namespace_key(h.fingerprint, h.scheme, h.tag) != h.ns)
    return bad(PageFileError::kWrongNamespace, "namespace key does not hash its strings");
  if (page_key(h.ns, h.parent, h.tokens) != h.key)
    return bad(PageFileError::kWrongKey, "page key does not hash (ns, parent, tokens)");
  return {};
}

}  // namespace

PageKey TierNamespace::key() const {
  return namespace_key(fingerprint, scheme, tag);
}

int64_t PageRecord::payload_bytes() const {
  int64_t n = 0;
  for (const RecordGroup& g : groups) n += static_cast<int64_t>(g.bytes.size());
  return n;
}

void PageRecord::own(BufferPool* pool) {
  const auto n = static_cast<size_t>(payload_bytes());
  std::shared_ptr<AlignedBytes> buf = pool ? pool->acquire(n) : std::make_shared<AlignedBytes>(n);
  size_t at = 0;
  for (RecordGroup& g : groups) {
    if (g.bytes.empty()) continue;
    std::memcpy(buf->data() + at, g.bytes.data(), g.bytes.size());
    g.bytes = {buf->data() + at, g.bytes.size()};
    at += g.bytes.size();
  }
  buf->set_size(at);
  owner = std::move(buf);
}

const char* page_file_error_name(PageFileError e) {
  switch (e) {
    case PageFileError::kNone:
      return "none";
    case PageFileError::kMissing:
      return "missing";
    case PageFileError::kIo:
      return "io";
    case PageFileError::kTruncated:
      return "truncated";
    case PageFileError::kBadMagic:
      return "bad_magic";
    case PageFileError::kBadVersion:
      return "bad_version";
    case PageFileError::kBadHeader:
      return "bad_header";
    case PageFileError::kHeaderChecksum:
      return "header_checksum";
    case PageFileError::kPayloadChecksum:
      return "payload_checksum";
    case PageFileError::kWrongNamespace:
      return "wrong_namespace";
    case PageFileError::kWrongKey:
      return "wrong_key";
  }
  return "?";
}

void encode_page_file(const PageRecord& r, const TierNamespace& ns, std::vector<uint8_t>& out) {
  CAIRN_CHECK(!r.key.empty() && !r.tokens.empty(), "page record without key or tokens");
  out.clear();
  Writer w(out);
  w.bytes(std::string_view(kMagic, 8));
  w.u32(kPageFileVersion);
  w.u32(0);  // header_bytes, set below
  const size_t at_sizes = out.size();
  w.u64(0), w.u64(0);  // file_bytes, payload_offset, set below
  w.key(ns.key()), w.key(r.key), w.key(r.parent);
  w.u64(r.tokens.size());
  w.u64(static_cast<uint64_t>(r.min_reusable));
  w.u8(r.quantized ? 1 : 0), w.u8(0), w.u8(0), w.u8(0);
  w.u32(static_cast<uint32_t>(r.groups.size()));
  for (const std::string* s : {&ns.fingerprint, &ns.scheme, &ns.tag})
    w.u32(static_cast<uint32_t>(s->size()));
  w.u32(0);
  w.bytes(ns.fingerprint), w.bytes(ns.scheme), w.bytes(ns.tag);
  w.pad_to(4);
  for (int32_t t : r.tokens) w.u32(static_cast<uint32_t>(t));
  w.pad_to(8);
  std::vector<uint64_t> seg(r.groups.size()), n_seg(r.groups.size());
  uint64_t n_checksums = 0;
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const uint64_t n = r.groups[g].bytes.size();
    seg[g] = n == 0 ? 0 : page_segment_bytes(n);
    n_seg[g] = n == 0 ? 0 : (n + seg[g] - 1) / seg[g];
    n_checksums += n_seg[g];
  }
  const uint64_t table_end = out.size() + kGroupEntryBytes * r.groups.size() + 8 * n_checksums + 8;
  const uint64_t payload_offset = round_up(table_end, kPageFileAlign);
  std::vector<uint64_t> offsets;  // [n_groups] 0: absent
  uint64_t at = payload_offset;
  for (size_t g = 0; g < r.groups.size(); ++g) {
    const std::span<const uint8_t> b = r.groups[g].bytes;
    offsets.push_back(b.empty() ? 0 : round_up(at, kPayloadAlign));
    if (!b.empty()) at = offsets.back() + b.size();
    w.u32(static_cast<uint32_t>(r.groups[g].window)), w.u32(b.empty() ? 0 : 1);
    w.u64(b.size()), w.u64(offsets.back());
    w.u32(static_cast<uint32_t>(seg[g])), w.u32(static_cast<uint32_t>(n_seg[g]));
  }
  for (size_t g = 0; g < r.groups.size(); ++g)
    for (uint64_t k = 0; k < n_seg[g]; ++k) {
      const uint64_t from = k * seg[g];
      const uint64_t n = std::min<uint64_t>(seg[g], r.groups[g].bytes.size() - from);
      w.u64(XXH3_64bits(r.groups[g].bytes.data() + from, n));
    }
  w.set_u32(12, static_cast<uint32_t>(table_end));
  std::memcpy(out.data() + at_sizes, &at, 8);
  std::memcpy(out.data() + at_sizes + 8, &payload_offset, 8);
  w.u64(XXH3_64bits(out.data(), out.size()));
  out.resize(at, 0);
  for (size_t g = 0; g < r.groups.size(); ++g)
    if (!r.groups[g].bytes.empty())
      std::memcpy(out.data() + offsets[g], r.groups[g].bytes.data(), r.groups[g].bytes.size());
}

PageFileCheck parse_page_header(std::span<const uint8_t> bytes, int64_t file_size,
                                const PageKey& expect_ns, PageFileHeader& h) {
  if (bytes.size() < 16) return bad(PageFileError::kTruncated, "shorter than the magic");
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) return bad(PageFileError::kBadMagic, "magic");
  Reader r(bytes);
  r.skip(8);
  h.version = r.u32();
  if (h.version != kPageFileVersion)
    return bad(PageFileError::kBadVersion, fmt::format("format version {}", h.version));
  const uint32_t header_bytes = r.u32();
  if (header_bytes < kFixedBytes + 8 || header_bytes > (1u << 26))
    return bad(PageFileError::kBadHeader, fmt::format("header_bytes {}", header_bytes));
  if (bytes.size() < header_bytes)
    return bad(PageFileError::kTruncated, fmt::format("header of {} bytes", header_bytes));
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + header_bytes - 8, 8);
  if (XXH3_64bits(bytes.data(), header_bytes - 8) != stored)
    return bad(PageFileError::kHeaderChecksum, "header checksum");
  h.file_bytes = r.u64();
  const uint64_t payload_offset = r.u64();
  h.ns = r.key(), h.key = r.key(), h.parent = r.key();
  h.page_tokens = static_cast<int64_t>(r.u64());
  h.min_reusable = static_cast<int64_t>(r.u64());
  h.quantized = r.le(1) != 0;
  r.skip(3);
  const uint32_t n_groups = r.u32();
  const uint32_t lens[3] = {r.u32(), r.u32(), r.u32()};
  r.skip(4);
  if (h.page_tokens <= 0 || h.page_tokens > kMaxPageTokens || n_groups > kMaxGroups ||
      lens[0] > kMaxString || lens[1] > kMaxString || lens[2] > kMaxString ||
      payload_offset < header_bytes || payload_offset % kPageFileAlign != 0 ||
      h.file_bytes > kMaxFileBytes || h.file_bytes < payload_offset)
    return bad(PageFileError::kBadHeader, "page_tokens, n_groups, lengths or offsets");
  if (file_size >= 0 && static_cast<uint64_t>(file_size) != h.file_bytes)
    return bad(file_size < static_cast<int64_t>(h.file_bytes) ? PageFileError::kTruncated
                                                              : PageFileError::kBadHeader,
               fmt::format("file of {} bytes, header says {}", file_size, h.file_bytes));
  PageFileCheck c = read_variable(r, n_groups, lens, h);
  if (c.ok() && r.pos() + 8 != header_bytes)
    c = bad(PageFileError::kBadHeader, "header_bytes does not end the group table");
  if (c.ok()) c = check_layout(h, payload_offset);
  if (c.ok()) c = check_identity(h, expect_ns);
  return c;
}

std::pair<uint64_t, uint64_t> PageFileHeader::Group::segments_of(uint64_t begin,
                                                                 uint64_t end) const {
  if (segment_bytes == 0 || begin >= end) return {0, 0};
  return {begin / segment_bytes, (std::min(end, bytes) + segment_bytes - 1) / segment_bytes};
}

PageFileCheck check_segments(const PageFileHeader& h, size_t g, uint64_t first, uint64_t last,
                             std::span<const uint8_t> bytes) {
  const PageFileHeader::Group& e = h.groups[g];
  CAIRN_CHECK(first <= last && last <= e.checksums.size(), "segments [{}, {}) of {}", first, last,
              e.checksums.size());
  for (uint64_t k = first; k < last; ++k) {
    const uint64_t from = (k - first) * e.segment_bytes;
    const uint64_t n = std::min(e.segment_bytes, e.bytes - k * e.segment_bytes);
    if (from + n > bytes.size())
      return bad(PageFileError::kTruncated, fmt::format("group {} segment {} not read", g, k));
    if (XXH3_64bits(bytes.data() + from, n) != e.checksums[k])
      return bad(PageFileError::kPayloadChecksum,
                 fmt::format("group {} segment {} checksum", g, k));
  }
  return {};
}

PageFileCheck decode_page_file(std::span<const uint8_t> file, const PageKey& expect_ns,
                               const PageKey& expect_key, PageRecord& out) {
  PageFileHeader h;
  PageFileCheck c = parse_page_header(file, static_cast<int64_t>(file.size()), expect_ns, h);
  if (!c.ok()) return c;
  if (h.key != expect_key)
    return bad(PageFileError::kWrongKey,
               fmt::format("key {}, asked {}", key_hex(h.key), key_hex(expect_key)));
  PageRecord r{h.key, h.parent, std::move(h.tokens), h.quantized, h.min_reusable, {}, nullptr};
  for (size_t g = 0; g < h.groups.size(); ++g) {
    const PageFileHeader::Group& e = h.groups[g];
    const std::span<const uint8_t> bytes =
        e.bytes ? file.subspan(e.offset, e.bytes) : file.first(0);
    c = check_segments(h, g, 0, e.checksums.size(), bytes);
    if (!c.ok()) return c;
    r.groups.push_back({e.window, bytes});
  }
  out = std::move(r);
  return {};
}

}  // namespace cairn
