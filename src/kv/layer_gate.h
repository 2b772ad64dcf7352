// What a sequence's forward waits on while pages it attends are still
// arriving from a slower tier (a layer-wise SSD restore: docs/durability.md,
// "Restores overlapped with the prompt"). The KV state calls wait_layer(il)
// before it reads layer il of a gated sequence's pages; the restore answers
// once layer il of every page it fills has been read and checked, or will
// never be. A check that fails after a sequence attached the pages is reported
// by failed_from(): the caller then discards what the step computed for that
// sequence from that position on.
#pragma once

#include <cstdint>

namespace cairn {

class LayerGate {
 public:
  virtual ~LayerGate() = default;
  // Blocks until model layer `layer` of the gated pages holds its bytes or
  // failed its check. Safe from any thread; cheap once settled.
  virtual void wait_layer(int layer) = 0;
  // Every layer, as wait_layer on each.
  virtual void wait_all() = 0;
  // The first position (of the sequence) whose page failed a check, -1 when
  // none did. Final once wait_all() returned.
  virtual int64_t failed_from() const = 0;
};

}  // namespace cairn
