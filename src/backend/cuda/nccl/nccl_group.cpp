#include "backend/cuda/nccl/nccl_group.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "backend/cuda/collective_args.h"
#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/nccl/rank_sum.h"
#include "core/error.h"

namespace cairn {
namespace {

void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess)
    fail(ErrorCode::kInternal, "NCCL: {} failed: {}", what, ncclGetErrorString(r));
}
#define CAIRN_NCCL_CHECK(call) nccl_check((call), #call)

}  // namespace

struct NcclGroup::Impl {
  std::vector<int> devices;           // [n] CUDA device of each rank
  std::vector<ncclComm_t> comms;      // [n]
  std::vector<float*> scratch;        // [n] gathered partials [n, count]
  std::vector<size_t> scratch_bytes;  // [n]
  std::atomic<bool> aborted{false};

  int n() const { return static_cast<int>(devices.size()); }

  // NCCL reads its environment at its first initialization in the process.
  void init_comms() {
    setenv("NCCL_NVLS_ENABLE", "0", 1);  // no NVLink SHARP: never create multicast objects
    comms.assign(devices.size(), nullptr);
    CAIRN_NCCL_CHECK(ncclCommInitAll(comms.data(), n(), devices.data()));
  }

  float* scratch_for(int r, size_t bytes) {
    auto i = static_cast<size_t>(r);
    if (scratch_bytes[i] < bytes) {
      if (scratch[i] != nullptr) CAIRN_CUDA_CHECK(cudaFree(scratch[i]));
      scratch[i] = nullptr;
      scratch_bytes[i] = 0;
      CAIRN_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&scratch[i]), bytes));
      scratch_bytes[i] = bytes;
    }
    return scratch[i];
  }

  // Waits for the calling rank's stream, failing when the group is aborted or NCCL reports an
  // error (a peer that never arrives must not hang the caller).
  void wait(int r) {
    for (;;) {
      cudaError_t q = cudaStreamQuery(cuda::stream());
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) cuda::check(q, "cudaStreamQuery (NCCL collective)");
      if (aborted.load())
        fail(ErrorCode::kUnavailable, "tensor-parallel rank {}: the group was aborted", r);
      ncclResult_t async = ncclSuccess;
      CAIRN_NCCL_CHECK(ncclCommGetAsyncError(comms[static_cast<size_t>(r)], &async));
      if (async != ncclSuccess && async != ncclInProgress) nccl_check(async, "a collective");
      std::this_thread::yield();
    }
  }

  void check_open(int r) const {
    if (aborted.load())
      fail(ErrorCode::kUnavailable, "tensor-parallel rank {}: the group was aborted", r);
  }
};

namespace {

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(NcclGroup::Impl& g, int rank) : g_(g), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return g_.n(); }

  // On the rank's stream (its context's, rank_context.h), after the ops that made x.
  void all_reduce_sum(Tensor& x) override {
    float* data = cuda::device_f32(x, "all_reduce_sum");
    const auto count = static_cast<size_t>(x.numel());
    g_.check_open(rank_);
    if (g_.n() == 1 || count == 0) return;
    float* parts = g_.scratch_for(rank_, count * sizeof(float) * static_cast<size_t>(g_.n()));
    CAIRN_NCCL_CHECK(
        ncclAllGather(data, parts, count, ncclFloat, g_.comms[index()], cuda::stream()));
    cuda::rank_order_sum(parts, g_.n(), x.numel(), data, cuda::stream());
  }

  void all_gather(const Tensor& send, Tensor& recv) override {
    const float* in = cuda::device_f32(send, "all_gather send");
    float* out = cuda::device_f32(recv, "all_gather recv");
    cuda::check_gather_sizes(send, recv, g_.n());
    g_.check_open(rank_);
    CAIRN_NCCL_CHECK(ncclAllGather(in, out, static_cast<size_t>(send.numel()), ncclFloat,
                                   g_.comms[index()], cuda::stream()));
  }

  void finish() override { g_.wait(rank_); }

  void abort() override { g_.aborted.store(true); }

  // Every rank has returned: abort the communicators (ending any collective a
  // rank left behind) and make them again.
  void reset() override {
    if (!g_.aborted.load()) return;
    for (ncclComm_t& c : g_.comms) {
      if (c != nullptr) ncclCommAbort(c);
      c = nullptr;
    }
    g_.init_comms();
    g_.aborted.store(false);
  }

 private:
  size_t index() const { return static_cast<size_t>(rank_); }

  NcclGroup::Impl& g_;
  int rank_;
};

}  // namespace

NcclGroup::NcclGroup(const std::vector<int>& devices) : impl_(std::make_unique<Impl>()) {
  if (devices.empty()) fail(ErrorCode::kInvalidArgument, "an NCCL group needs ≥ 1 device");
  Impl& g = *impl_;
  g.devices = devices;
  g.scratch.assign(devices.size(), nullptr);
  g.scratch_bytes.assign(devices.size(), 0);
  int current = 0;
  CAIRN_CUDA_CHECK(cudaGetDevice(&current));
  g.init_comms();
  CAIRN_CUDA_CHECK(cudaSetDevice(current));  // ncclCommInitAll visits every device
  for (int r = 0; r < g.n(); ++r) ranks_.push_back(std::make_unique<NcclCommunicator>(g, r));
}

NcclGroup::~NcclGroup() {
  Impl& g = *impl_;
  for (size_t i = 0; i < g.devices.size(); ++i) {
    cudaSetDevice(g.devices[i]);
    if (i < g.comms.size() && g.comms[i] != nullptr) ncclCommDestroy(g.comms[i]);
    if (g.scratch[i] != nullptr) cudaFree(g.scratch[i]);
  }
}

int NcclGroup::size() const {
  return impl_->n();
}

Communicator& NcclGroup::rank(int r) {
  return *ranks_.at(static_cast<size_t>(r));
}

}  // namespace cairn
