#include "backend/op_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <vector>

#include "backend/op_table.h"

namespace cairn::ops {
namespace {

using Clock = std::chrono::steady_clock;

struct Record {
  std::string label;
  double host_us;
  size_t first_mark;  // the op's marks: first_mark and first_mark + 1
};

// One device kind's window: the table it wraps, its marks and records.
struct Profile {
  std::mutex mutex;
  bool active = false;
  OpTable inner;
  OpMarks* marks = nullptr;
  size_t next_mark = 0;
  Clock::time_point start;
  std::vector<Record> records;
};

Profile& profile(DeviceKind kind) {
  static std::array<Profile, 2> p;
  return p[kind == DeviceKind::kCuda ? 1 : 0];
}

// An op's row in the report: matmul by its shape, the rest by name.
std::string label(const char* name, const Tensor& x, const Tensor& w, const Tensor*,
                  const Tensor&) {
  return fmt::format("{} n={} {}x{} {}", name, x.dim(0), w.dim(0), w.dim(1), dtype_name(w.dtype()));
}
template <typename... A>
std::string label(const char* name, const A&...) {
  return name;
}

template <size_t N>
struct Name {
  char s[N];
  constexpr Name(const char (&a)[N]) { std::copy_n(a, N, s); }
};

template <DeviceKind K, Name N, auto M>
struct Timed;

// The entry OpTable::*M of the wrapped table, timed.
template <DeviceKind K, Name N, typename... A, void (*OpTable::*M)(A...)>
struct Timed<K, N, M> {
  static void call(A... a) {
    Profile& p = profile(K);
    size_t first = 0;
    {
      std::lock_guard<std::mutex> lock(p.mutex);
      first = p.next_mark;
      p.next_mark += 2;
      p.marks->mark(first);
    }
    const auto t0 = Clock::now();
    (p.inner.*M)(a...);
    const double host = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.marks->mark(first + 1);
    p.records.push_back({label(N.s, a...), host, first});
  }
};

// Every entry of OpTable by its member's name; optional ones stay empty when the wrapped
// table has none.
// clang-format off
#define CAIRN_OP_ENTRIES(X)                                                                 \
  X(matmul) X(embedding) X(rms_norm) X(layer_norm) X(rope) X(attention) X(attention_seqs)  \
  X(attention_pages) X(gated_activation) X(gated_activation_fused) X(add) X(scale) X(softcap) \
  X(softmax)                                                                                \
  X(log_softmax) X(convert) X(convert_rows) X(quantize_rows) X(split_columns)              \
  X(sample_rows) X(add_rms_norm) X(split_rope)
// clang-format on

template <DeviceKind K>
OpTable timed_table(const OpTable& inner) {
  OpTable t;
#define CAIRN_TIMED(op) t.op = inner.op ? &Timed<K, #op, &OpTable::op>::call : nullptr;
  CAIRN_OP_ENTRIES(CAIRN_TIMED)
#undef CAIRN_TIMED
  t.matmul_input_dtype = inner.matmul_input_dtype;  // a query, not an op: passed through
  return t;
}

struct Row {
  std::string label;
  int64_t calls = 0;
  double host_us = 0, device_us = 0;
};

// Rows by label, most device time first.
std::vector<Row> rows_of(Profile& p) {
  std::vector<Row> rows;
  std::map<std::string, size_t> at;
  for (const Record& r : p.records) {
    auto [it, fresh] = at.try_emplace(r.label, rows.size());
    if (fresh) rows.push_back({r.label});
    Row& row = rows[it->second];
    ++row.calls, row.host_us += r.host_us;
    row.device_us += p.marks->between_us(r.first_mark, r.first_mark + 1);
  }
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return a.device_us > b.device_us; });
  return rows;
}

std::string report(const std::vector<Row>& rows, double wall) {
  double host = 0, device = 0;
  for (const Row& r : rows) host += r.host_us, device += r.device_us;
  std::string out = fmt::format("    {:<44} {:>7} {:>10} {:>10} {:>6}\n", "op", "calls", "host us",
                                "device us", "device");
  for (const Row& r : rows)
    out += fmt::format("    {:<44} {:>7} {:>10.1f} {:>10.1f} {:>5.1f}%\n", r.label, r.calls,
                       r.host_us / r.calls, r.device_us / r.calls, 100.0 * r.device_us / device);
  if (rows.empty()) return out + fmt::format("    window {:.0f} us: no ops\n", wall);
  return out + fmt::format(
                   "    window {:.0f} us: ops' host time {:.0f} us ({:.0f}%), ops' device time "
                   "{:.0f} us ({:.0f}%)\n",
                   wall, host, 100.0 * host / wall, device, 100.0 * device / wall);
}

}  // namespace

void start_op_profile(DeviceKind kind, OpMarks& marks) {
  Profile& p = profile(kind);
  marks.synchronize();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (!p.active) p.inner = op_table(kind);
  p.active = true;
  p.marks = &marks;
  p.next_mark = 0;
  p.records.clear();
  register_op_table(kind, kind == DeviceKind::kCuda ? timed_table<DeviceKind::kCuda>(p.inner)
                                                    : timed_table<DeviceKind::kCpu>(p.inner));
  p.start = Clock::now();
}

bool op_profile_open(DeviceKind kind) {
  Profile& p = profile(kind);
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.active;
}

std::string stop_op_profile(DeviceKind kind) {
  Profile& p = profile(kind);
  std::lock_guard<std::mutex> lock(p.mutex);
  if (!p.active) return {};
  p.marks->synchronize();
  const double wall = std::chrono::duration<double, std::micro>(Clock::now() - p.start).count();
  register_op_table(kind, p.inner);
  p.active = false;
  return report(rows_of(p), wall);
}

}  // namespace cairn::ops
