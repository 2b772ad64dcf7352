#include "backend/cuda/op_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_ops.h"
#include "backend/cuda/cuda_runtime.h"

namespace cairn::cuda {
namespace {

using Clock = std::chrono::steady_clock;  // <chrono> via op_profile.h

struct Record {
  std::string label;
  double host_us;
  size_t events;  // index of the op's first event; the second follows it
};

// The window's records and the events they reference (created as needed, reused by
// later windows).
struct Profile {
  std::mutex mutex;
  std::atomic<bool> active{false};
  Clock::time_point start;
  std::vector<cudaEvent_t> events;
  size_t used = 0;
  std::vector<Record> records;

  cudaEvent_t take(size_t i) {
    while (events.size() <= i) {
      cudaEvent_t e = nullptr;
      CAIRN_CUDA_CHECK(cudaEventCreate(&e));
      events.push_back(e);
    }
    return events[i];
  }
  size_t before() {
    std::lock_guard<std::mutex> lock(mutex);
    const size_t i = used;
    used += 2;
    CAIRN_CUDA_CHECK(cudaEventRecord(take(i), stream()));
    take(i + 1);
    return i;
  }
  void after(std::string label, double host_us, size_t i) {
    std::lock_guard<std::mutex> lock(mutex);
    CAIRN_CUDA_CHECK(cudaEventRecord(events[i + 1], stream()));
    records.push_back({std::move(label), host_us, i});
  }
};

Profile& profile() {
  static Profile* p = new Profile();  // lives until exit: events may still be pending
  return *p;
}

struct Row {
  std::string label;
  int64_t calls = 0;
  double host_us = 0, device_us = 0;
};

std::vector<Row> rows_of(Profile& p) {
  std::vector<Row> rows;
  std::map<std::string, size_t> at;
  for (const Record& r : p.records) {
    float ms = 0;
    CAIRN_CUDA_CHECK(cudaEventElapsedTime(&ms, p.events[r.events], p.events[r.events + 1]));
    auto [it, fresh] = at.try_emplace(r.label, rows.size());
    if (fresh) rows.push_back({r.label});
    Row& row = rows[it->second];
    ++row.calls, row.host_us += r.host_us, row.device_us += 1e3 * ms;
  }
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return a.device_us > b.device_us; });
  return rows;
}

}  // namespace

namespace profile_detail {

bool active() {
  return profile().active.load(std::memory_order_relaxed);
}
size_t before() {
  return profile().before();
}
void after(std::string label, double host_us, size_t first_event) {
  profile().after(std::move(label), host_us, first_event);
}

std::string label(const char* name, const Tensor& x, const Tensor& w, const Tensor*,
                  const Tensor&) {
  return fmt::format("{} n={} {}x{} {}", name, x.dim(0), w.dim(0), w.dim(1), dtype_name(w.dtype()));
}

}  // namespace profile_detail

void start_op_profile() {
  static const bool installed = (install_timed_ops(), true);
  (void)installed;
  Profile& p = profile();
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  std::lock_guard<std::mutex> lock(p.mutex);
  p.used = 0;
  p.records.clear();
  p.active = true;
  p.start = Clock::now();
}

std::string stop_op_profile() {
  Profile& p = profile();
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(stream()));
  std::lock_guard<std::mutex> lock(p.mutex);
  p.active = false;
  const double wall = std::chrono::duration<double, std::micro>(Clock::now() - p.start).count();
  const std::vector<Row> rows = rows_of(p);
  double host = 0, device = 0;
  for (const Row& r : rows) host += r.host_us, device += r.device_us;
  std::string out = fmt::format("    {:<44} {:>7} {:>10} {:>10} {:>6}\n", "op", "calls", "host us",
                                "device us", "device");
  for (const Row& r : rows)
    out += fmt::format("    {:<44} {:>7} {:>10.1f} {:>10.1f} {:>5.1f}%\n", r.label, r.calls,
                       r.host_us / r.calls, r.device_us / r.calls, 100.0 * r.device_us / device);
  if (rows.empty()) return out + fmt::format("    window {:.0f} us: no ops\n", wall);
  out += fmt::format(
      "    window {:.0f} us: ops' host time {:.0f} us ({:.0f}%), ops' device time {:.0f} us "
      "({:.0f}%)\n",
      wall, host, 100.0 * host / wall, device, 100.0 * device / wall);
  return out;
}

}  // namespace cairn::cuda
