// The SSD tier of the prefix cache: page files (page_file.h) under one
// directory per namespace, an index rebuilt at start from their headers, LRU
// by bytes under a cap. Thread-safe: the engine thread asks the index
// (contains, match_chain: no disk I/O), the spill worker writes, restore
// workers read; every read is verified and anything that does not verify is a
// miss, logged and quarantined. See docs/durability.md.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "prefix/buffer_pool.h"
#include "prefix/page_file.h"
#include "prefix/page_file_io.h"

namespace cairn {

struct PageKeyHash {
  size_t operator()(const PageKey& k) const { return static_cast<size_t>(k.lo ^ (k.hi << 1)); }
};

struct SsdTierStats {
  int64_t files = 0, bytes = 0, max_bytes = 0;
  int64_t hits = 0;     // reads served (verified)
  int64_t misses = 0;   // reads not served: not indexed, gone, unreadable or corrupt
  int64_t corrupt = 0;  // files that failed a check (at scan or read)
  int64_t restore_bytes = 0;
  double restore_seconds = 0;  // wall time of served reads, read and verify
  int64_t writes = 0, write_bytes = 0, write_failures = 0;
  int64_t evictions = 0;       // files deleted to keep the cap
  int64_t buffered_reads = 0;  // reads where O_DIRECT was refused
  int64_t stray_temps = 0;     // temporary files removed at start
  int64_t quarantined = 0;     // files in quarantine/ (counted at start, then moved in)
  double restore_mb_per_s() const {
    return restore_seconds > 0 ? static_cast<double>(restore_bytes) / 1e6 / restore_seconds : 0;
  }
};

// A file that failed a check, and what became of it.
struct SsdIssue {
  std::string file;
  PageFileError error = PageFileError::kNone;
  std::string detail;
  std::string action;  // "quarantined", "removed", "skipped" (another namespace's: left alone)
};

struct SsdRead {
  std::optional<PageRecord> record;  // set when served
  PageFileError error = PageFileError::kNone;
  std::string detail;
};

// One page file open for a layer-wise restore (SsdTier::open_page): its
// header read and checked, the file kept open for reads of its parts.
struct SsdPage {
  PageKey key;
  DirectFile file;
  PageFileHeader header;
  AlignedBytes head;  // the file's first bytes, as read at open
  int64_t bytes_read = 0;
  double seconds = 0;  // spent reading and checking
};

struct SsdTierOptions {
  bool quarantine = true;  // false: remove failing files instead of moving them aside
  // Files kept in quarantine/ at most (they are outside the byte cap); past
  // this, failing files are removed.
  int64_t max_quarantined = 64;
};

class SsdTier {
 public:
  // Uses <root>/<namespace key hex>/ (created), holding an exclusive lock on
  // it while alive; scans it: indexes the files of namespace ns, removes stray
  // temporary files, quarantines the ones failing a check, leaves other
  // namespaces' files alone, then evicts down to max_bytes. Error(kIo) when
  // the directory cannot be made or another process holds it.
  SsdTier(const std::string& root, int64_t max_bytes, TierNamespace ns,
          SsdTierOptions options = {});
  ~SsdTier();
  SsdTier(const SsdTier&) = delete;
  SsdTier& operator=(const SsdTier&) = delete;

  // Index only (no disk I/O): whether a file for key is indexed.
  bool contains(const PageKey& key) const;
  // Index only: marks key's file used (LRU) when indexed; whether it is.
  bool touch(const PageKey& key);
  // Index only: the keys of the chain continuing `parent` over tokens' pages
  // ([page_tokens] each, whole pages only), up to max_pages, as long as each
  // page is indexed. Verification happens when the pages are read.
  std::vector<PageKey> match_chain(const PageKey& parent, std::span<const int32_t> tokens,
                                   int64_t page_tokens, int64_t max_pages) const;
  // Reads and verifies key's file (O_DIRECT). A failing check is a miss with
  // its reason; the file is quarantined. Marks the entry used. The record's
  // bytes live in a pooled buffer (its owner) until the record goes.
  SsdRead read(const PageKey& key);
  // Layer-wise reads (ssd_tier_parts.cpp). Opens key's file, reads its first
  // head_bytes (at least the header block) and checks the header (all but the
  // payload checksums). A failing check is returned, and handled as read()
  // handles one.
  PageFileCheck open_page(const PageKey& key, size_t head_bytes, SsdPage& out);
  // Reads segments [first, last) of group g to their place in dst (the
  // group's page memory: segment k at dst + k * segment_bytes) and checks
  // them. Read straight into dst (O_DIRECT) where it is 4 KiB-aligned, else
  // through buf (the caller's, reused); from the head when it holds them.
  PageFileCheck read_part(SsdPage& page, size_t g, uint64_t first, uint64_t last, uint8_t* dst,
                          AlignedBytes& buf);
  // After a page's last part, or its first failing one (check): counted as
  // read() counts a read; a failing file is set aside.
  void finish_page(const SsdPage& page, const PageFileCheck& check);
  // Writes r durably (skipped when its key is indexed), evicting least
  // recently used files first to keep max_bytes. For the spill worker.
  // sync_dir false: the rename is durable only after the next sync_dir()
  // (several writes share one directory fsync).
  IoStatus write(const PageRecord& r, bool sync_dir = true);
  // fsyncs the tier's directory: every write before it is then durable.
  IoStatus sync_dir();

  SsdTierStats stats() const;
  std::vector<SsdIssue> issues() const;  // the last 256, oldest first
  const std::string& dir() const { return dir_; }
  std::string path_of(const PageKey& key) const;
  const TierNamespace& ns() const { return ns_; }

 private:
  struct Entry {
    int64_t bytes = 0;
    PageKey parent;
    uint64_t tick = 0;
  };
  using Index = std::unordered_map<PageKey, Entry, PageKeyHash>;

  struct Found {
    int64_t mtime_ns = 0;
    PageKey key;
    Entry entry;
  };
  void scan();
  void scan_temps();
  // Checks one file's header; a good one goes to found, a bad one aside.
  void scan_file(const std::string& name, std::vector<Found>& found);
  void insert_locked(const PageKey& key, const Entry& e);
  void erase_locked(Index::iterator it);
  void touch_locked(Index::iterator it);
  // Drops files, least recently used leaves first, until `need` more bytes fit;
  // returns the paths to unlink (outside the lock).
  std::vector<std::string> evict_locked(int64_t need);
  void settle_read(const PageKey& key, const PageFileCheck& check, int64_t bytes, double seconds,
                   bool buffered);
  void set_aside_locked(const std::string& path, PageFileError e, const std::string& detail);
  void note_issue_locked(SsdIssue issue);

  std::string root_, dir_, tmp_dir_, quarantine_dir_;
  int64_t max_bytes_;
  TierNamespace ns_;
  PageKey ns_key_;
  SsdTierOptions options_;
  int lock_fd_ = -1;

  mutable std::mutex mu_;           // guards everything below
  std::mutex write_mu_;             // one write at a time (keeps the cap exact); guards write_buf_
  std::vector<uint8_t> write_buf_;  // the file being written, reused
  BufferPool read_buffers_{int64_t{64} << 20};  // reads' file buffers, reused
  Index index_;
  std::map<uint64_t, PageKey> lru_;                             // tick → key, oldest first
  std::unordered_map<PageKey, int32_t, PageKeyHash> children_;  // parent → indexed children
  uint64_t tick_ = 0;
  SsdTierStats stats_;
  std::vector<SsdIssue> issues_;
};

std::string page_key_hex(const PageKey& k);

}  // namespace cairn
