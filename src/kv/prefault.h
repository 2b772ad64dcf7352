// Faulting host memory in ahead of its first writes, on a background thread. A page
// allocated unzeroed is about to be written whole (a restore's copies from page files,
// on the engine thread while reads are still in flight); fresh memory costs a fault per
// 4 KiB (or per 2 MiB huge page) at those writes, which on a virtual machine can take
// longer than the disk. MADV_POPULATE_WRITE maps the range writable without touching its
// contents, so the copies find it ready. Where the kernel lacks it (Linux < 5.14),
// nothing is done.
#pragma once

#include <memory>

#include "core/storage.h"

namespace cairn {

// Queues s's memory (host) to be faulted in; s stays alive until that is done. Its
// contents are never read or written.
void prefault_async(std::shared_ptr<Storage> s);

// Returns once every range queued before the call is done (for tests).
void prefault_drain();

}  // namespace cairn
