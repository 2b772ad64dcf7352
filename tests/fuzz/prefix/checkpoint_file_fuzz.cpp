// Generation checkpoint files from arbitrary bytes: decoding never crashes,
// and a file that decodes re-encodes to one that decodes and re-encodes to
// the same bytes (reserved bytes aside, the fields survive a round trip). The corpus holds valid
// files of namespace ("fuzz-model", "bf16/p16", "generation").
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "prefix/checkpoint_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cairn;
  static const TierNamespace ns{"fuzz-model", "bf16/p16", kCheckpointTag};
  static const PageKey ns_key = ns.key();
  Checkpoint c;
  if (!decode_checkpoint_file({data, size}, ns_key, PageKey{}, c).ok()) return 0;
  std::vector<uint8_t> again, twice;
  encode_checkpoint_file(c, ns, again);
  Checkpoint back;
  if (!decode_checkpoint_file(again, ns_key, c.key, back).ok()) std::abort();
  encode_checkpoint_file(back, ns, twice);
  if (again != twice) std::abort();
  return 0;
}
