#include "prefix/layered_restore.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"

namespace cairn {

// One page of the chain. Its parts run in range order (a part waits for the
// previous one), so only one reader at a time touches its file.
struct LayeredRestore::Page {
  std::unique_ptr<SsdPage> file;  // open from the first part until the last settles
  PageFileHeader header;
  size_t next_range = 0;  // parts settled so far
};

std::vector<int> layer_ranges(int n_layers, int n) {
  n = std::clamp(n, 1, std::max(n_layers, 1));
  std::vector<int> range(static_cast<size_t>(std::max(n_layers, 0)));
  for (int l = 0; l < n_layers; ++l) range[static_cast<size_t>(l)] = l * n / n_layers;
  return range;
}

std::vector<std::pair<uint64_t, uint64_t>> part_segments(const LayeredPlan& plan, size_t g,
                                                         size_t range, uint64_t segment_bytes) {
  const auto [begin, end] = plan.parts.at(range).at(g);
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  if (begin >= end) return runs;
  const uint64_t shard_bytes = plan.page_bytes.at(g) / static_cast<uint64_t>(plan.n_shards);
  for (int sh = 0; sh < plan.n_shards; ++sh) {
    const uint64_t lo = static_cast<uint64_t>(sh) * shard_bytes + begin;
    const uint64_t hi = static_cast<uint64_t>(sh) * shard_bytes + end;
    uint64_t first = begin == 0 ? lo / segment_bytes : (lo + segment_bytes - 1) / segment_bytes;
    const uint64_t last = (hi + segment_bytes - 1) / segment_bytes;
    if (!runs.empty()) first = std::max(first, runs.back().second);
    if (first >= last) continue;
    if (!runs.empty() && runs.back().second == first)
      runs.back().second = last;
    else
      runs.emplace_back(first, last);
  }
  return runs;
}

LayeredRestore::LayeredRestore(SsdTier& tier, LayeredPlan plan, std::function<void()> on_settle)
    : tier_(tier), plan_(std::move(plan)), on_settle_(std::move(on_settle)) {
  n_ranges_ = plan_.parts.size();
  CAIRN_CHECK(plan_.n_shards >= 1 && (plan_.n_shards == 1 || plan_.sink),
              "a layered restore of {} shards' pages needs a sink", plan_.n_shards);
  CAIRN_CHECK(plan_.tiers.empty() || plan_.tiers.size() == plan_.keys.size(),
              "layered restore of {} pages from {} tiers", plan_.keys.size(), plan_.tiers.size());
  CAIRN_CHECK(
      n_ranges_ > 0 && (plan_.sink ? plan_.dst.empty() : plan_.dst.size() == plan_.keys.size()),
      "layered restore of {} pages in {} ranges", plan_.keys.size(), n_ranges_);
  for (size_t i = 0; i < plan_.keys.size(); ++i) pages_.push_back(std::make_unique<Page>());
  range_done_.assign(n_ranges_, 0);
  first_ok_.assign(plan_.keys.size(), false);
}

LayeredRestore::~LayeredRestore() = default;

void LayeredRestore::start(SsdRestorer& restorer) {
  std::vector<SsdRestorer::Job> jobs;
  const std::shared_ptr<LayeredRestore> self = shared_from_this();
  for (size_t r = 0; r < n_ranges_; ++r)
    for (size_t i = 0; i < n_pages(); ++i)
      jobs.push_back([self, i, r](bool skip) { self->run(i, r, skip); });
  restorer.submit_jobs(std::move(jobs));
}

void LayeredRestore::run(size_t page, size_t range, bool skip) {
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return pages_[page]->next_range == range; });
    skip = skip || (failed_ >= 0 && static_cast<int64_t>(page) >= failed_);
  }
  if (!skip && range + 1 == n_ranges_ && plan_.last_range_hold.count() > 0)
    std::this_thread::sleep_for(plan_.last_range_hold);
  const bool ok = !skip && read_part(page, range).ok();
  if (!ok) pages_[page]->file.reset();  // this page is done with
  settle(page, range, ok);
}

// The header, checked against what the plan's pages hold.
PageFileCheck LayeredRestore::open(size_t i) {
  Page& p = *pages_[i];
  p.file = std::make_unique<SsdPage>();
  // The header block alone: the parts then read straight into the pages.
  PageFileCheck c = tier(i).open_page(plan_.keys[i], kPageFileAlign, *p.file);
  if (!c.ok()) return c;
  const PageFileHeader& h = p.file->header;
  bool fits = h.groups.size() == plan_.windows.size() && h.quantized == plan_.quantized &&
              h.page_tokens == plan_.page_tokens;
  for (size_t g = 0; fits && g < h.groups.size(); ++g)
    fits =
        h.groups[g].window == plan_.windows[g] &&
        (h.groups[g].bytes == 0 ? plan_.windows[g] > 0 : h.groups[g].bytes == plan_.page_bytes[g]);
  if (!fits) {
    c = {PageFileError::kBadHeader, "groups, format or sizes differ from the KV state's"};
    tier(i).finish_page(*p.file, c);
    return c;
  }
  p.header = h;
  return c;
}

PageFileCheck LayeredRestore::read_part(size_t i, size_t r) {
  Page& p = *pages_[i];
  if (r == 0) {
    PageFileCheck c = open(i);
    if (!c.ok()) return c;
  }
  thread_local AlignedBytes buf;  // a reader's, reused
  for (size_t g = 0; g < p.header.groups.size(); ++g) {
    const uint64_t s = p.header.groups[g].segment_bytes;
    if (s == 0) continue;  // a sliding group's released page
    for (const auto& [first, last] : part_segments(plan_, g, r, s)) {
      const PageFileCheck c = read_group(i, g, first, last, buf);
      if (!c.ok()) {
        tier(i).finish_page(*p.file, c);
        return c;
      }
    }
  }
  if (r + 1 == n_ranges_) tier(i).finish_page(*p.file, {});
  if (r + 1 == n_ranges_) p.file.reset();
  return {};
}

// Segments [first, last) of page i's group g, checked, into the page: read
// there in place, or into a staging buffer laid out like the page and handed
// to the sink.
PageFileCheck LayeredRestore::read_group(size_t i, size_t g, uint64_t first, uint64_t last,
                                         AlignedBytes& buf) {
  if (!plan_.sink) return tier(i).read_part(*pages_[i]->file, g, first, last, plan_.dst[i][g], buf);
  const PageFileHeader::Group& e = pages_[i]->header.groups[g];
  const uint64_t at = first * e.segment_bytes;
  const uint64_t end = std::min(last * e.segment_bytes, e.bytes);
  if (at >= end) return {};
  const std::shared_ptr<uint8_t> stage = plan_.sink->staging(e.bytes);
  const PageFileCheck c = tier(i).read_part(*pages_[i]->file, g, first, last, stage.get(), buf);
  if (!c.ok()) return c;
  try {
    plan_.sink->write(i, g, at, {stage.get() + at, end - at});
  } catch (const Error& err) {  // on a reader's thread: the page fails, the chain ends there
    return {PageFileError::kIo, fmt::format("copy into the page: {}", err.what())};
  }
  return c;
}

void LayeredRestore::settle(size_t page, size_t range, bool ok) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (!ok && (failed_ < 0 || static_cast<int64_t>(page) < failed_))
      failed_ = static_cast<int64_t>(page);
    pages_[page]->next_range = range + 1;
    if (range == 0) first_ok_[page] = ok;
    ++range_done_[range];
    while (ready_ranges_ < n_ranges_ && range_done_[ready_ranges_] == n_pages()) ++ready_ranges_;
    ++n_settled_;
    const bool all = n_settled_ == n_pages() * n_ranges_;
    if (all) done_at_ = std::chrono::steady_clock::now();
    wake = (range == 0 && range_done_[0] == n_pages()) || all;
  }
  cv_.notify_all();
  if (wake && on_settle_) on_settle_();
}

void LayeredRestore::wait_layer(int layer) {
  const auto r = static_cast<size_t>(plan_.range_of_layer.at(static_cast<size_t>(layer)));
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return ready_ranges_ > r; });
}

void LayeredRestore::wait_all() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return n_settled_ == n_pages() * n_ranges_; });
}

int64_t LayeredRestore::failed_from() const {
  std::lock_guard lock(mu_);
  return failed_ < 0 ? -1 : plan_.first_position + failed_ * plan_.page_tokens;
}

bool LayeredRestore::headers_done() const {
  std::lock_guard lock(mu_);
  return range_done_[0] == n_pages();
}

bool LayeredRestore::done() const {
  std::lock_guard lock(mu_);
  return n_settled_ == n_pages() * n_ranges_;
}

std::chrono::steady_clock::time_point LayeredRestore::done_at() const {
  std::lock_guard lock(mu_);
  return done_at_;
}

size_t LayeredRestore::good_pages() const {
  std::lock_guard lock(mu_);
  return failed_ < 0 ? n_pages() : static_cast<size_t>(failed_);
}

size_t LayeredRestore::header_pages() const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(std::find(first_ok_.begin(), first_ok_.end(), false) -
                             first_ok_.begin());
}

const PageFileHeader& LayeredRestore::header(size_t i) const {
  return pages_.at(i)->header;
}

void LayeredRestore::end_chain(size_t first) {
  std::lock_guard lock(mu_);
  const auto f = static_cast<int64_t>(first);
  if (failed_ < 0 || f < failed_) failed_ = f;
}

void LayeredRestore::release_sink() {
  CAIRN_CHECK(done(), "a layered restore's sink released while its readers run");
  plan_.sink.reset();
}

}  // namespace cairn
