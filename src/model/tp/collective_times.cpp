// TensorParallelModel::time_collectives and time_link: a step's collectives alone, and the link
// they cross, timed on rank 0's thread.
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "backend/device.h"
#include "core/error.h"
#include "core/median.h"
#include "model/tp/tensor_parallel_model.h"
#include "model/tp/vocab_parallel.h"

namespace cairn::tp {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

CollectiveTimes TensorParallelModel::time_collectives(int64_t rows, int64_t logit_rows,
                                                      int rounds) {
  if (rows < 1 || logit_rows < 1 || logit_rows > rows || rounds < 1)
    fail(ErrorCode::kInvalidArgument, "time_collectives: rows {}, logit rows {}, rounds {}", rows,
         logit_rows, rounds);
  const int64_t hidden = config_.hidden_size, pad = plan_.vocab_pad;
  CollectiveTimes t;
  t.all_reduces = 1 + 2 * config_.n_layers;
  t.all_reduce_bytes = rows * hidden * 4;
  t.all_gather_bytes = n_ranks() * logit_rows * pad * 4;
  std::vector<double> reduces(static_cast<size_t>(rounds)), gathers(reduces.size());
  DeviceBackend& backend = device_backend(kind_);
  backend.synchronize();
  auto rank_rounds = [&](int r) {
    Communicator& comm = group_->rank(r);
    const Device dev{kind_, devices_[static_cast<size_t>(r)]};
    Tensor x = empty_on(dev, {rows, hidden}, DType::kF32);
    Tensor send = empty_on(dev, {logit_rows * pad}, DType::kF32);
    Tensor all = empty_on(dev, {n_ranks() * logit_rows * pad}, DType::kF32);
    fill_zeros(x);
    fill_zeros(send);
    for (int i = -1; i < rounds; ++i) {  // round -1: untimed
      Clock::time_point t0 = Clock::now();
      for (int k = 0; k < t.all_reduces; ++k) comm.all_reduce_sum(x);
      comm.finish();
      const double reduce = seconds_since(t0);
      t0 = Clock::now();
      comm.all_gather(send, all);
      comm.finish();
      if (r == 0 && i >= 0)
        reduces[static_cast<size_t>(i)] = reduce,
        gathers[static_cast<size_t>(i)] = seconds_since(t0);
    }
    backend.synchronize();
  };
  run_on_ranks(rank_rounds);
  t.all_reduce_seconds = median(reduces);
  t.all_gather_seconds = median(gathers);
  return t;
}

double TensorParallelModel::time_link(int64_t bytes, int rounds) {
  if (n_ranks() < 2 || bytes < 4 || rounds < 1)
    fail(ErrorCode::kInvalidArgument, "time_link: {} ranks, {} bytes, {} rounds", n_ranks(), bytes,
         rounds);
  std::vector<Tensor> ends(2);  // rank 0's (source), rank 1's (target)
  std::vector<double> times(static_cast<size_t>(rounds));
  DeviceBackend& backend = device_backend(kind_);
  backend.synchronize();
  run_on_ranks([&](int r) {  // each end made on its own rank's thread and device
    if (r > 1) return;
    Tensor t = empty_on({kind_, devices_[static_cast<size_t>(r)]}, {bytes / 4}, DType::kF32);
    fill_zeros(t);
    backend.synchronize();
    ends[static_cast<size_t>(r)] = std::move(t);
  });
  run_on_ranks([&](int r) {
    for (int i = -1; i < rounds && r == 0; ++i) {  // round -1: untimed
      const Clock::time_point t0 = Clock::now();
      backend.copy(ends[0], ends[1]);
      backend.synchronize();
      if (i >= 0) times[static_cast<size_t>(i)] = seconds_since(t0);
    }
  });
  run_on_ranks([&](int r) {
    if (r < 2) ends[static_cast<size_t>(r)] = Tensor();
  });
  return median(times);
}

}  // namespace cairn::tp
