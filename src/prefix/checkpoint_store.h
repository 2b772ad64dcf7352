// The generation checkpoints of one model and KV scheme on disk: one directory
// (<root>/<namespace key hex>/, tag "generation") of checkpoint files named
// <request key>.<step>.ckpt, an index rebuilt at start, durable writes where the
// newest checkpoint of a key wins, and durable removal when a generation ends.
// Thread-safe: find() runs on the caller's thread at submit, write() and
// remove() on the checkpoint worker; nothing here runs on the engine thread. A
// file that fails a check is a miss, logged (stderr and issues()) and removed.
// See docs/checkpoints.md.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "prefix/checkpoint_file.h"
#include "prefix/page_file_io.h"
#include "prefix/ssd_tier.h"

namespace cairn {

struct CheckpointStoreStats {
  int64_t files = 0;           // checkpoint files indexed
  int64_t writes = 0;          // checkpoints written durably
  int64_t write_failures = 0;  // writes or removals that failed (ENOSPC, EIO, …)
  int64_t found = 0;           // finds served (verified)
  int64_t corrupt = 0;         // files that failed a check (at scan or find): removed
  int64_t removed = 0;         // files removed: superseded, or their generation ended
  int64_t stray_temps = 0;     // temporary files removed at start
};

struct CheckpointRead {
  std::optional<Checkpoint> checkpoint;  // set when served
  PageFileError error = PageFileError::kMissing;
  std::string detail;
};

class CheckpointStore {
 public:
  // Uses <root>/<ns key hex>/ (created; ns.tag is kCheckpointTag), holding an
  // exclusive lock on it while alive; removes stray temporary files and
  // indexes the checkpoints that pass every check (the others are removed).
  // Error(kIo) when the directory cannot be made or another process holds it.
  CheckpointStore(const std::string& root, TierNamespace ns);
  ~CheckpointStore();
  CheckpointStore(const CheckpointStore&) = delete;
  CheckpointStore& operator=(const CheckpointStore&) = delete;

  // Index only: whether a checkpoint of key is indexed.
  bool contains(const PageKey& key) const;
  // Reads and verifies key's newest checkpoint. A file failing a check is
  // removed and logged, and the read is a miss.
  CheckpointRead find(const PageKey& key);
  // Writes c durably (temporary file, fsync, rename, directory fsync), then
  // removes the key's older checkpoints (no fsync: an older one a crash brings
  // back is whole, and loses to the newer one).
  IoStatus write(const Checkpoint& c);
  // Removes every checkpoint of key, then fsyncs the directory: once it
  // returns ok, no crash brings one back.
  IoStatus remove(const PageKey& key);

  CheckpointStoreStats stats() const;
  std::vector<SsdIssue> issues() const;  // the last 256, oldest first
  const std::string& dir() const { return dir_; }
  std::string path_of(const PageKey& key, int64_t step) const;
  const TierNamespace& ns() const { return ns_; }

 private:
  using Steps = std::map<int64_t, int64_t>;  // step → file bytes, oldest first
  void scan();
  void scan_file(const std::string& name);
  // Removes a failing file, counts and logs it.
  void reject_locked(const std::string& path, const PageFileCheck& c);
  void forget_locked(const PageKey& key, int64_t step);

  std::string dir_, tmp_dir_;
  TierNamespace ns_;
  PageKey ns_key_;
  int lock_fd_ = -1;
  mutable std::mutex mu_;  // guards what follows
  std::unordered_map<PageKey, Steps, PageKeyHash> index_;
  CheckpointStoreStats stats_;
  std::vector<SsdIssue> issues_;
  std::vector<uint8_t> write_buf_;  // the file being written (worker only)
};

}  // namespace cairn
