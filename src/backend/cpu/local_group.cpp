#include "backend/cpu/local_group.h"

#include <cstring>

#include "core/error.h"

namespace cairn {
namespace {

float* host_f32(const Tensor& t, const char* what) {
  if (t.dtype() != DType::kF32 || !t.is_contiguous() || t.device().kind != DeviceKind::kCpu)
    fail(ErrorCode::kInvalidArgument, "{}: expected a contiguous host f32 tensor, got {}", what,
         t.describe());
  return t.data<float>();
}

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(LocalGroup::Shared& shared, int rank) : s_(shared), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return s_.n_ranks; }

  void all_reduce_sum(Tensor& x) override {
    publish(host_f32(x, "all_reduce_sum"), x.numel());
    check_counts("all_reduce_sum");
    const int64_t n = x.numel(), parts = s_.n_ranks;
    const int64_t begin = n * rank_ / parts, end = n * (rank_ + 1) / parts;
    for (int64_t i = begin; i < end; ++i) {
      float sum = s_.buffers[0][i];
      for (int r = 1; r < s_.n_ranks; ++r) sum += s_.buffers[static_cast<size_t>(r)][i];
      for (float* b : s_.buffers) b[i] = sum;
    }
    s_.arrive_and_wait(rank_);  // every part written before any rank reads its buffer
  }

  void all_gather(const Tensor& send, Tensor& recv) override {
    const int64_t count = send.numel();
    float* out = host_f32(recv, "all_gather recv");
    if (recv.numel() != count * s_.n_ranks)
      fail(ErrorCode::kInvalidArgument, "all_gather: recv is {}, expected {} x {} elements",
           recv.describe(), s_.n_ranks, count);
    publish(host_f32(send, "all_gather send"), count);
    check_counts("all_gather");
    for (int r = 0; r < s_.n_ranks; ++r)
      std::memcpy(out + r * count, s_.buffers[static_cast<size_t>(r)],
                  static_cast<size_t>(count) * sizeof(float));
    s_.arrive_and_wait(rank_);  // no rank reuses its send buffer while others copy it
  }

  void abort() override {
    std::lock_guard<std::mutex> lock(s_.mutex);
    s_.aborted = true;
    s_.cv.notify_all();
  }

  void reset() override {
    std::lock_guard<std::mutex> lock(s_.mutex);
    s_.aborted = false;
    s_.arrived = 0;
  }

 private:
  void publish(float* data, int64_t count) {
    s_.buffers[static_cast<size_t>(rank_)] = data;
    s_.counts[static_cast<size_t>(rank_)] = count;
    s_.arrive_and_wait(rank_);
  }

  // Every rank sees the same counts, so all fail together or none does.
  void check_counts(const char* what) const {
    for (int r = 1; r < s_.n_ranks; ++r)
      if (s_.counts[static_cast<size_t>(r)] != s_.counts[0])
        fail(ErrorCode::kInvalidArgument, "{}: rank 0 passed {} elements, rank {} passed {}", what,
             s_.counts[0], r, s_.counts[static_cast<size_t>(r)]);
  }

  LocalGroup::Shared& s_;
  int rank_;
};

}  // namespace

void LocalGroup::Shared::arrive_and_wait(int rank) {
  std::unique_lock<std::mutex> lock(mutex);
  const uint64_t seen = generation;
  if (!aborted && ++arrived == n_ranks) {
    arrived = 0;
    ++generation;
    cv.notify_all();
    return;
  }
  cv.wait(lock, [&] { return aborted || generation != seen; });
  if (generation == seen)
    fail(ErrorCode::kUnavailable, "tensor-parallel rank {}: the group was aborted", rank);
}

LocalGroup::LocalGroup(int n_ranks) : n_ranks_(n_ranks) {
  if (n_ranks < 1) fail(ErrorCode::kInvalidArgument, "a group needs ≥ 1 rank, got {}", n_ranks);
  shared_.n_ranks = n_ranks;
  shared_.buffers.assign(static_cast<size_t>(n_ranks), nullptr);
  shared_.counts.assign(static_cast<size_t>(n_ranks), 0);
  for (int r = 0; r < n_ranks; ++r)
    ranks_.push_back(std::make_unique<LocalCommunicator>(shared_, r));
}

LocalGroup::~LocalGroup() = default;

}  // namespace cairn
