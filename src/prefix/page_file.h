// Page files: one cached prefix page on disk, self-describing (DESIGN.md
// decision 6). One file per page: the tiers name pages one by one (a key per
// page), the RAM tier evicts them one by one (leaves first), and the SSD tier's
// LRU deletes them one by one, so a file never holds a page that is gone from
// the index, nor half a run. Restore bandwidth comes from several reads in
// flight, not from long files. Byte layout: docs/durability.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kv/page_meta.h"

namespace cairn {

// What a tier's files belong to: the model fingerprint, the KV scheme name and
// a tag ("prefix", or "checkpoint" for generation checkpoints). key() is
// namespace_key of the three; files carry both the key and the strings.
struct TierNamespace {
  std::string fingerprint, scheme, tag = "prefix";
  PageKey key() const;
};

class BufferPool;

// One layer group's page of a cached page: empty bytes when a sliding group had
// released it (the window no longer saw it when it was cached).
struct RecordGroup {
  int32_t window = 0;              // 0: full attention
  std::span<const uint8_t> bytes;  // [page_bytes] as laid out in the pool, or empty
};

// A cached page as the RAM tier's entry describes it, with its bytes. The
// groups' bytes live in `owner` (a read's file buffer, or the copy own()
// makes), or in memory the caller keeps alive while owner is empty.
struct PageRecord {
  PageKey key, parent;              // parent empty for a sequence's first page
  std::vector<int32_t> tokens;      // [page_tokens]
  bool quantized = false;           // pages in the scheme's quantized formats
  int64_t min_reusable = 0;         // the publishing sequence's min_reusable_tokens
  std::vector<RecordGroup> groups;  // [n_groups] in the state's group order
  std::shared_ptr<const void> owner;

  int64_t payload_bytes() const;  // sum of the groups' bytes
  // Copies the groups' bytes (e.g. spans into pool pages about to be freed)
  // into one buffer the record owns, from pool when given; repoints the spans.
  void own(BufferPool* pool = nullptr);
};

// Version 2: each group's bytes start 4096-aligned and carry a checksum per
// segment (a run of 4096-multiple bytes), so a reader may verify and use part
// of a page (some layers) before the rest is read. Version 1 files are a miss.
constexpr uint32_t kPageFileVersion = 2;
constexpr size_t kPageFileAlign = 4096;        // header block size; O_DIRECT buffer alignment
constexpr uint64_t kMaxSegmentsPerGroup = 64;  // what the writer aims at (segments ≥ 4096 bytes)
// The segment size the writer gives a group of `bytes` bytes.
inline uint64_t page_segment_bytes(uint64_t bytes) {
  const uint64_t per = (bytes + kMaxSegmentsPerGroup - 1) / kMaxSegmentsPerGroup;
  return (per + kPageFileAlign - 1) / kPageFileAlign * kPageFileAlign;
}

// Why a page file is not served. Every check failing is one of these, never an
// exception for the caller.
enum class PageFileError : uint8_t {
  kNone,
  kMissing,          // no such file (evicted, or never written)
  kIo,               // open/read failed
  kTruncated,        // shorter than its header says, or than a header
  kBadMagic,         // not a page file
  kBadVersion,       // a format version this build does not read
  kBadHeader,        // sizes or offsets that do not fit together
  kHeaderChecksum,   // header bytes changed
  kPayloadChecksum,  // a group's page bytes changed
  kWrongNamespace,   // another model, KV scheme or tag
  kWrongKey,         // not the page asked for, or a key its content does not hash to
};
const char* page_file_error_name(PageFileError e);

// The header of a page file, as parsed (payload not read).
struct PageFileHeader {
  uint32_t version = 0;
  uint64_t file_bytes = 0;
  PageKey ns, key, parent;
  std::string fingerprint, scheme, tag;
  int64_t page_tokens = 0;
  std::vector<int32_t> tokens;
  bool quantized = false;
  int64_t min_reusable = 0;
  struct Group {
    int32_t window = 0;
    uint64_t bytes = 0, offset = 0;  // bytes 0: absent
    uint64_t segment_bytes = 0;  // a multiple of kPageFileAlign; the last segment may be shorter
    std::vector<uint64_t> checksums;  // [ceil(bytes / segment_bytes)] XXH3-64 of each segment
    // Segments [first, last) that bytes [begin, end) of the group touch.
    std::pair<uint64_t, uint64_t> segments_of(uint64_t begin, uint64_t end) const;
  };
  std::vector<Group> groups;
};

struct PageFileCheck {
  PageFileError error = PageFileError::kNone;
  std::string detail;  // names the field at fault
  bool ok() const { return error == PageFileError::kNone; }
};

// The whole file for r in namespace ns: header block (kPageFileAlign bytes,
// or more for very long token lists), then the groups' bytes, 64-byte aligned.
// Replaces out's contents (its capacity is reused).
void encode_page_file(const PageRecord& r, const TierNamespace& ns, std::vector<uint8_t>& out);
inline std::vector<uint8_t> encode_page_file(const PageRecord& r, const TierNamespace& ns) {
  std::vector<uint8_t> out;
  encode_page_file(r, ns, out);
  return out;
}

// Parses and checks the header at the start of `bytes` (at least the header
// block; the whole file when file_size is its size): magic, version, sizes,
// header checksum, namespace against `expect_ns` (key and strings), the key
// against page_key(ns, parent, tokens). file_size < 0: unknown (no truncation check).
PageFileCheck parse_page_header(std::span<const uint8_t> bytes, int64_t file_size,
                                const PageKey& expect_ns, PageFileHeader& out);

// Checks segments [first, last) of group g: `bytes` holds the group's bytes
// from first * segment_bytes on (at least through segment last - 1).
PageFileCheck check_segments(const PageFileHeader& h, size_t g, uint64_t first, uint64_t last,
                             std::span<const uint8_t> bytes);

// Parses and checks a whole file (header as above, then every segment's
// checksum), and that its key is `expect_key`. On success fills `out`, whose
// groups' bytes point into `file` (owner left empty).
PageFileCheck decode_page_file(std::span<const uint8_t> file, const PageKey& expect_ns,
                               const PageKey& expect_key, PageRecord& out);

}  // namespace cairn
