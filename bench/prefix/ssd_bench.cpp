// Restores from the SSD tier against the disk: writes a few hundred MB of page
// files (durably), restarts the tier (index from the headers), restores every
// page with O_DIRECT and verification, several reads in flight; then measures
// the disk's own O_DIRECT read bandwidth on one file of the same size, with the
// same request size and reads in flight, and with large sequential requests.
// Prints MB/s and the ratio; asserts nothing.
//   cairn_ssd_bench [--dir DIR] [--mb 256] [--page-kb 1024] [--threads 4]
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "prefix/disk_bandwidth.h"
#include "prefix/page_file_io.h"
#include "prefix/page_key.h"
#include "prefix/ssd_restorer.h"
#include "prefix/ssd_tier.h"

namespace {

using namespace cairn;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string dir = "/tmp";
  int64_t mb = 256, page_kb = 1024;
  int threads = 4;
};

Args parse(int argc, char** argv) {
  Args a;
  if (const char* t = std::getenv("TMPDIR"); t && *t) a.dir = t;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir")
      a.dir = v;
    else if (k == "--mb")
      a.mb = std::stoll(v);
    else if (k == "--page-kb")
      a.page_kb = std::stoll(v);
    else if (k == "--threads")
      a.threads = std::stoi(v);
  }
  return a;
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A chain of pages of page_bytes split over two groups (full and sliding).
std::vector<PageKey> write_pages(SsdTier& tier, const Args& a, int64_t& bytes) {
  std::mt19937 rng(7);
  const int64_t page_bytes = a.page_kb * 1024, n = a.mb * 1024 / a.page_kb;
  std::vector<PageKey> keys;
  PageKey parent;
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    PageRecord r;
    std::deque<std::vector<uint8_t>> store;  // the groups' bytes while r is written
    r.parent = parent;
    for (int t = 0; t < 32; ++t) r.tokens.push_back(static_cast<int32_t>(rng() % 32000));
    r.key = page_key(tier.ns().key(), parent, r.tokens);
    for (int64_t g_bytes : {page_bytes * 3 / 4, page_bytes / 4}) {
      std::vector<uint8_t>& b = store.emplace_back(static_cast<size_t>(g_bytes));
      for (size_t j = 0; j < b.size(); j += 8) b[j] = static_cast<uint8_t>(rng());
      r.groups.push_back({g_bytes == page_bytes / 4 ? 1024 : 0, b});
    }
    const IoStatus s = tier.write(r);
    if (!s.ok()) throw std::runtime_error(s.what);
    keys.push_back(parent = r.key);
  }
  bytes = tier.stats().bytes;
  fmt::print("write: {} page files, {:.1f} MB, {:.1f} MB/s (each fsynced, renamed, dir fsynced)\n",
             n, bytes / 1e6, bytes / 1e6 / since(t0));
  return keys;
}

// The disk's O_DIRECT reads of one file of the same size: requests shaped like
// the restore's, and large sequential ones.
DiskReadFigures disk_bandwidth(const Args& a, int64_t bytes, int64_t request) {
  const DiskReadFigures f = measure_disk_reads(a.dir, bytes, request, a.threads);
  fmt::print(
      "disk O_DIRECT: {:.1f} MB/s ({} KiB requests, {} in flight), "
      "{:.1f} MB/s (8 MiB, 1), {:.1f} MB/s (8 MiB, {})\n",
      f.same_mb_s, (request + 4095) / 4096 * 4, a.threads, f.seq_mb_s, f.wide_mb_s, a.threads);
  return f;
}

// Every page read whole and verified by the restorer's readers, a.threads in
// flight; throws when one is not served.
void restore_all(SsdTier& tier, const std::vector<PageKey>& keys, int threads) {
  std::mutex mu;
  std::condition_variable cv;
  size_t settled = 0;
  std::string failed;
  SsdRestorer restorer(threads);
  std::vector<SsdRestorer::Job> jobs;
  for (const PageKey& k : keys)
    jobs.push_back([&, k](bool skip) {
      const SsdRead r = skip ? SsdRead{} : tier.read(k);
      std::lock_guard lock(mu);
      if (!r.record && failed.empty()) failed = skip ? "stopped" : r.detail;
      ++settled;
      cv.notify_all();
    });
  restorer.submit_jobs(std::move(jobs));
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return settled == keys.size(); });
  if (!failed.empty()) throw std::runtime_error("restore: page not served: " + failed);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  const std::string root = a.dir + "/cairn_ssd_bench";
  std::filesystem::remove_all(root);
  const TierNamespace ns{"bench-model", "bf16", "prefix"};
  int64_t bytes = 0;
  std::vector<PageKey> keys;
  {
    SsdTier tier(root, int64_t{1} << 40, ns);
    keys = write_pages(tier, a, bytes);
  }
  auto t0 = Clock::now();
  SsdTier tier(root, int64_t{1} << 40, ns);  // restart
  fmt::print("restart: index of {} files rebuilt in {:.1f} ms\n", tier.stats().files,
             since(t0) * 1e3);
  t0 = Clock::now();
  restore_all(tier, keys, a.threads);
  const double restore = static_cast<double>(bytes) / 1e6 / since(t0);
  const SsdTierStats st = tier.stats();
  fmt::print(
      "restore: {:.1f} MB/s ({} reads in flight, verified; one read alone {:.1f} MB/s; {} "
      "O_DIRECT-refused reads)\n",
      restore, a.threads, st.restore_mb_per_s(), st.buffered_reads);
  const int64_t file_bytes = bytes / static_cast<int64_t>(keys.size());
  const DiskReadFigures disk = disk_bandwidth(a, bytes, file_bytes);
  fmt::print("restore / disk: {:.0f}% of the same-shaped reads, {:.0f}% of the best\n",
             100.0 * restore / disk.same_mb_s, 100.0 * restore / disk.best());
  if (std::getenv("KEEP")) return 0;
  std::filesystem::remove_all(root);
  return 0;
}
