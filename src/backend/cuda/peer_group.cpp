#include "backend/cuda/peer_group.h"

#include <cuda_runtime.h>

#include "backend/cuda/collective_args.h"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/peer_sum.h"

namespace cairn {
namespace {

// A rank thread spins this long at a barrier before it sleeps: the ranks issue the same
// launches between collectives and arrive microseconds apart.
constexpr int kSpinMicroseconds = 200;

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

// The collectives are ordered on the GPUs, not on the host: a rank records an event on its
// stream once its buffer is written and publishes it with the buffer; every rank's stream waits
// for the others' events before it reads or writes their buffers, and for their "done" events
// before it goes on (so no rank reuses or frees its buffer while another still writes it).
// The host only meets at the two barriers, and the collective returns once queued.
class PeerCommunicator final : public RendezvousCommunicator {
 public:
  using RendezvousCommunicator::RendezvousCommunicator;
  ~PeerCommunicator() override {
    for (cudaEvent_t e : {ready_, done_})
      if (e != nullptr) cudaEventDestroy(e);
  }

  void all_reduce_sum(Tensor& x) override {
    float* data = cuda::device_f32(x, "all_reduce_sum");
    const int64_t n = x.numel();
    cudaStream_t s = cuda::stream();
    meet_.publish(rank_, data, n, "all_reduce_sum", record(ready_, s));
    wait_for(meet_.ready(), s);
    cuda::peer_part_sum(meet_.buffers().data(), size(), part_begin(n), part_end(n), s);
    meet_.arrive_done(rank_, record(done_, s));
    wait_for(meet_.done(), s);  // every part written before this rank's stream goes on
  }

  void all_gather(const Tensor& send, Tensor& recv) override {
    const float* in = cuda::device_f32(send, "all_gather send");
    float* out = cuda::device_f32(recv, "all_gather recv");
    cuda::check_gather_sizes(send, recv, size());
    const int64_t count = send.numel();
    cudaStream_t s = cuda::stream();
    meet_.publish(rank_, const_cast<float*>(in), count, "all_gather", record(ready_, s));
    wait_for(meet_.ready(), s);
    const std::vector<float*>& bufs = meet_.buffers();
    for (size_t r = 0; r < bufs.size(); ++r)
      CAIRN_CUDA_CHECK(cudaMemcpyAsync(out + static_cast<int64_t>(r) * count, bufs[r],
                                       static_cast<size_t>(count) * sizeof(float),
                                       cudaMemcpyDefault, s));
    meet_.arrive_done(rank_, record(done_, s));
    wait_for(meet_.done(), s);  // no rank reuses its send buffer while others copy it
  }

  void finish() override { CAIRN_CUDA_CHECK(cudaStreamSynchronize(cuda::stream())); }

 private:
  // e (made at first use, on the calling rank's device) recorded on s.
  static void* record(cudaEvent_t& e, cudaStream_t s) {
    if (e == nullptr) CAIRN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CAIRN_CUDA_CHECK(cudaEventRecord(e, s));
    return e;
  }
  void wait_for(const std::vector<void*>& events, cudaStream_t s) const {
    for (int r = 0; r < size(); ++r)
      if (r != rank_)
        CAIRN_CUDA_CHECK(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(events[r]), 0));
  }

  cudaEvent_t ready_ = nullptr, done_ = nullptr;
};

int checked_size(const std::vector<int>& devices) {
  const auto n = static_cast<int>(devices.size());
  if (n < 1 || n > cuda::kMaxPeerRanks)
    fail(ErrorCode::kInvalidArgument, "a peer group has 1 to {} ranks, not {}", cuda::kMaxPeerRanks,
         n);
  return n;
}

}  // namespace

PeerGroup::PeerGroup(const std::vector<int>& devices)
    : RendezvousGroup(checked_size(devices), kSpinMicroseconds) {
  reach_each_other(devices);
  for (int r = 0; r < size(); ++r) ranks_.push_back(std::make_unique<PeerCommunicator>(meet_, r));
}

}  // namespace cairn
