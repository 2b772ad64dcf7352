#include "backend/cuda/peer_group.h"

#include <cuda_runtime.h>

#include "backend/cuda/collective_args.h"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/peer_sum.h"

namespace cairn {
namespace {

// Lets kernels and copies on `from` read and write `to`'s memory, cudaMalloc'd and
// stream-ordered (a pool's memory needs its own grant). Called with `from` current.
void reach(int from, int to) {
  int ok = 0;
  CAIRN_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, from, to));
  if (!ok)
    fail(ErrorCode::kUnsupported,
         "tensor parallel: GPU {} cannot reach GPU {}'s memory (no peer access); ranks on "
         "these GPUs need NCCL",
         from, to);
  cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled)
    cudaGetLastError();
  else
    CAIRN_CUDA_CHECK(e);
  cudaMemPool_t pool = nullptr;
  CAIRN_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, to));
  cudaMemAccessDesc access{};
  access.location.type = cudaMemLocationTypeDevice;
  access.location.id = from;
  access.flags = cudaMemAccessFlagsProtReadWrite;
  CAIRN_CUDA_CHECK(cudaMemPoolSetAccess(pool, &access, 1));
}

void reach_each_other(const std::vector<int>& devices) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  for (int d : devices)
    if (d < 0 || d >= n)
      fail(ErrorCode::kInvalidArgument, "a peer group: no CUDA device {} ({} present)", d, n);
  int current = 0;
  CAIRN_CUDA_CHECK(cudaGetDevice(&current));
  for (int a : devices)
    for (int b : devices) {
      if (a == b) continue;
      CAIRN_CUDA_CHECK(cudaSetDevice(a));
      reach(a, b);
    }
  CAIRN_CUDA_CHECK(cudaSetDevice(current));
}

class PeerCommunicator final : public RendezvousCommunicator {
 public:
  using RendezvousCommunicator::RendezvousCommunicator;

  void all_reduce_sum(Tensor& x) override {
    float* data = cuda::device_f32(x, "all_reduce_sum");
    const int64_t n = x.numel();
    CAIRN_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));  // the ops that made x are done
    meet_.publish(rank_, data, n, "all_reduce_sum");
    cuda::peer_part_sum(meet_.buffers().data(), size(), part_begin(n), part_end(n), cuda::stream());
    CAIRN_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
    meet_.arrive_and_wait(rank_);  // every part written before any rank reads its buffer
  }

  void all_gather(const Tensor& send, Tensor& recv) override {
    const float* in = cuda::device_f32(send, "all_gather send");
    float* out = cuda::device_f32(recv, "all_gather recv");
    cuda::check_gather_sizes(send, recv, size());
    const int64_t count = send.numel();
    CAIRN_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
    meet_.publish(rank_, const_cast<float*>(in), count, "all_gather");  // only read
    const std::vector<float*>& bufs = meet_.buffers();
    for (size_t r = 0; r < bufs.size(); ++r)
      CAIRN_CUDA_CHECK(cudaMemcpyAsync(out + static_cast<int64_t>(r) * count, bufs[r],
                                       static_cast<size_t>(count) * sizeof(float),
                                       cudaMemcpyDefault, cuda::stream()));
    CAIRN_CUDA_CHECK(cudaStreamSynchronize(cuda::stream()));
    meet_.arrive_and_wait(rank_);  // no rank reuses its send buffer while others copy it
  }
};

int checked_size(const std::vector<int>& devices) {
  const auto n = static_cast<int>(devices.size());
  if (n < 1 || n > cuda::kMaxPeerRanks)
    fail(ErrorCode::kInvalidArgument, "a peer group has 1 to {} ranks, not {}", cuda::kMaxPeerRanks,
         n);
  return n;
}

}  // namespace

PeerGroup::PeerGroup(const std::vector<int>& devices) : meet_(checked_size(devices)) {
  reach_each_other(devices);
  for (int r = 0; r < size(); ++r) ranks_.push_back(std::make_unique<PeerCommunicator>(meet_, r));
}

PeerGroup::~PeerGroup() = default;

}  // namespace cairn
