#include "prefix/ssd_restorer.h"

#include <algorithm>

#include "core/error.h"

namespace cairn {

RestoreHandle::RestoreHandle(std::vector<PageKey> keys, std::vector<SsdTier*> tiers,
                             std::function<void()> on_settle)
    : keys_(std::move(keys)),
      tiers_(std::move(tiers)),
      on_settle_(std::move(on_settle)),
      results_(keys_.size()),
      settled_(keys_.size(), false) {
  CAIRN_CHECK(tiers_.empty() || tiers_.size() == keys_.size(), "{} tiers for {} pages",
              tiers_.size(), keys_.size());
}

bool RestoreHandle::done() const {
  std::lock_guard lock(mu_);
  return n_settled_ == keys_.size();
}

void RestoreHandle::wait() const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return n_settled_ == keys_.size(); });
}

void RestoreHandle::wait_page(size_t i) const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return settled_[i]; });
}

size_t RestoreHandle::ready_prefix() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  while (n < keys_.size() && settled_[n] && results_[n].record) ++n;
  return n;
}

SsdRead RestoreHandle::take(size_t i) {
  std::lock_guard lock(mu_);
  CAIRN_CHECK(i < keys_.size() && settled_[i], "restore page {} not settled", i);
  return std::move(results_[i]);
}

void RestoreHandle::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
}

bool RestoreHandle::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void RestoreHandle::settle(size_t i, SsdRead r) {
  {
    std::lock_guard lock(mu_);
    results_[i] = std::move(r);
    settled_[i] = true;
    ++n_settled_;
  }
  cv_.notify_all();
  if (on_settle_) on_settle_();
}

SsdRestorer::SsdRestorer(SsdTier& tier, int n_threads) : tier_(tier) {
  for (int i = 0; i < std::max(n_threads, 1); ++i) threads_.emplace_back([this] { reader(); });
}

SsdRestorer::~SsdRestorer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::shared_ptr<RestoreHandle> SsdRestorer::submit(std::vector<PageKey> keys,
                                                   std::vector<SsdTier*> tiers,
                                                   std::function<void()> on_settle) {
  auto h = std::make_shared<RestoreHandle>(std::move(keys), std::move(tiers), std::move(on_settle));
  std::vector<Job> jobs;
  for (size_t i = 0; i < h->size(); ++i)
    jobs.push_back([this, h, i](bool skip) {
      if (skip || h->cancelled())
        h->settle(i, {std::nullopt, PageFileError::kMissing, "cancelled"});
      else
        h->settle(i, (h->tiers_.empty() ? &tier_ : h->tiers_[i])->read(h->key(i)));
    });
  submit_jobs(std::move(jobs));
  return h;
}

void SsdRestorer::submit_jobs(std::vector<Job> jobs) {
  {
    std::lock_guard lock(mu_);
    for (Job& j : jobs) tasks_.push_back(std::move(j));
  }
  cv_.notify_all();
}

// Takes jobs in submission order; after stop, runs the rest as skipped.
void SsdRestorer::reader() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;
    Job job = std::move(tasks_.front());
    tasks_.pop_front();
    const bool skip = stop_;
    lock.unlock();
    job(skip);
    lock.lock();
  }
}

}  // namespace cairn
