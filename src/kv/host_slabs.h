// Host page memory for a PagePool: pages of one size cut from 2 MiB-aligned
// slabs that ask the kernel for transparent huge pages (madvise), so a page's
// first touch faults once per 2 MiB rather than once per 4 KiB (a restore or a
// prefill writing fresh pages would otherwise spend most of its time in page
// faults on a virtual machine). A released page's slot is reused by the next
// allocation; slabs return to the system only when the last page of the last
// user is gone (their count never exceeds what the pool's budget held at once).
#pragma once

#include <cstdint>
#include <memory>

#include "core/storage.h"

namespace cairn {

class HostSlabs {
 public:
  // Pages of page_bytes (> 0), each 64-byte aligned.
  explicit HostSlabs(int64_t page_bytes);
  ~HostSlabs();
  HostSlabs(const HostSlabs&) = delete;
  HostSlabs& operator=(const HostSlabs&) = delete;

  // A page (contents undefined); its slot returns when the storage is destroyed,
  // which may happen on any thread and after this object is gone.
  std::shared_ptr<Storage> allocate();
  int64_t pages_per_slab() const;
  int64_t n_slabs() const;

  struct State;  // the slabs and free slots (host_slabs.cpp), kept alive by every page

 private:
  std::shared_ptr<State> state_;
};

}  // namespace cairn
