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

class LocalCommunicator final : public RendezvousCommunicator {
 public:
  using RendezvousCommunicator::RendezvousCommunicator;

  void all_reduce_sum(Tensor& x) override {
    meet_.publish(rank_, host_f32(x, "all_reduce_sum"), x.numel(), "all_reduce_sum");
    const std::vector<float*>& bufs = meet_.buffers();
    for (int64_t i = part_begin(x.numel()); i < part_end(x.numel()); ++i) {
      float sum = bufs[0][i];
      for (size_t r = 1; r < bufs.size(); ++r) sum += bufs[r][i];
      for (float* b : bufs) b[i] = sum;
    }
    meet_.arrive_and_wait(rank_);  // every part written before any rank reads its buffer
  }

  void all_gather(const Tensor& send, Tensor& recv) override {
    const int64_t count = send.numel();
    float* out = host_f32(recv, "all_gather recv");
    if (recv.numel() != count * size())
      fail(ErrorCode::kInvalidArgument, "all_gather: recv is {}, expected {} x {} elements",
           recv.describe(), size(), count);
    meet_.publish(rank_, host_f32(send, "all_gather send"), count, "all_gather");
    const std::vector<float*>& bufs = meet_.buffers();
    for (size_t r = 0; r < bufs.size(); ++r)
      std::memcpy(out + static_cast<int64_t>(r) * count, bufs[r],
                  static_cast<size_t>(count) * sizeof(float));
    meet_.arrive_and_wait(rank_);  // no rank reuses its send buffer while others copy it
  }
};

}  // namespace

LocalGroup::LocalGroup(int n_ranks) : RendezvousGroup(n_ranks, 0) {
  for (int r = 0; r < n_ranks; ++r) ranks_.push_back(std::make_unique<LocalCommunicator>(meet_, r));
}

}  // namespace cairn
