// Where the ranks of an in-process group meet (docs/tensor-parallel.md): a barrier that an abort
// breaks, and the buffer and element count each rank publishes for the current collective. The
// host group (cpu/local_group.h) and the peer group of GPUs in one process
// (cuda/peer_group.h) are both built on it; they differ only in who adds and copies the values.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/communicator.h"

namespace cairn {

class Rendezvous {
 public:
  // spin_us: how long a rank at a barrier spins before it sleeps (ranks that each drive a GPU
  // arrive microseconds apart; CPU ranks share the cores and sleep at once).
  // Error(kInvalidArgument) for n_ranks < 1.
  explicit Rendezvous(int n_ranks, int spin_us = 0);
  int n_ranks() const { return n_ranks_; }

  // Blocks until every rank has arrived. Error(kUnavailable) once the group is aborted.
  void arrive_and_wait(int rank);
  // Rank `rank` publishes `data` of `count` f32 values (and `ready`: the peer group's event
  // that marks them written), waits for every rank, then checks that all counts agree (every
  // rank sees the same counts, so all fail together or none does).
  void publish(int rank, float* data, int64_t count, const char* what, void* ready = nullptr);
  // What the ranks published with the current collective, rank order (valid until its last
  // barrier).
  const std::vector<float*>& buffers() const { return buffers_; }
  const std::vector<void*>& ready() const { return ready_; }
  // Rank `rank` publishes `done` (the peer group's event that marks its part written) and waits
  // for every rank; done() holds them until the next collective's first barrier.
  void arrive_done(int rank, void* done);
  const std::vector<void*>& done() const { return done_; }

  // Wakes every rank waiting with an error; the group stays broken until reset().
  void abort();
  // Makes an aborted group usable again; called once no rank is inside a collective.
  void reset();

 private:
  // Spins until the barrier of generation `seen` has passed, the group is aborted, or spin_us
  // have gone by.
  void spin(uint64_t seen) const;

  int n_ranks_;
  int spin_us_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;                      // under mutex_
  std::atomic<uint64_t> generation_{0};  // written under mutex_, read by spinning ranks too
  std::atomic<bool> aborted_{false};     // likewise
  std::vector<float*> buffers_;          // [n_ranks]
  std::vector<int64_t> counts_;          // [n_ranks]
  std::vector<void*> ready_, done_;      // [n_ranks]
};

// The communicators of ranks that meet at one Rendezvous (a subclass's constructor makes them,
// one a rank, into ranks_).
class RendezvousGroup : public RankGroup {
 public:
  RendezvousGroup(const RendezvousGroup&) = delete;
  RendezvousGroup& operator=(const RendezvousGroup&) = delete;
  int size() const override { return meet_.n_ranks(); }
  Communicator& rank(int r) override { return *ranks_.at(static_cast<size_t>(r)); }

 protected:
  RendezvousGroup(int n_ranks, int spin_us) : meet_(n_ranks, spin_us) {}

  Rendezvous meet_;
  std::vector<std::unique_ptr<Communicator>> ranks_;
};

// A rank's communicator over a Rendezvous: rank, size, abort and reset; the collectives are
// the subclass's.
class RendezvousCommunicator : public Communicator {
 public:
  RendezvousCommunicator(Rendezvous& meet, int rank) : meet_(meet), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return meet_.n_ranks(); }
  void abort() override { meet_.abort(); }
  void reset() override { meet_.reset(); }
  void finish() override {}  // host groups: done when they return

 protected:
  // Elements [begin, end) of count that this rank adds in an all-reduce.
  int64_t part_begin(int64_t count) const { return count * rank_ / size(); }
  int64_t part_end(int64_t count) const { return count * (rank_ + 1) / size(); }

  Rendezvous& meet_;
  const int rank_;
};

}  // namespace cairn
