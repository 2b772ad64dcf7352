// Page files from arbitrary bytes: parsing and decoding never crash, and a file
// that decodes re-encodes to one that decodes to the same page. The corpus
// holds valid files of namespace ("fuzz-model", "bf16", "prefix").
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "prefix/page_file.h"

namespace {

bool same(const cairn::PageRecord& a, const cairn::PageRecord& b) {
  if (a.key != b.key || a.parent != b.parent || a.tokens != b.tokens ||
      a.quantized != b.quantized || a.min_reusable != b.min_reusable ||
      a.groups.size() != b.groups.size())
    return false;
  for (size_t g = 0; g < a.groups.size(); ++g)
    if (a.groups[g].window != b.groups[g].window ||
        a.groups[g].bytes.size() != b.groups[g].bytes.size() ||
        !std::equal(a.groups[g].bytes.begin(), a.groups[g].bytes.end(), b.groups[g].bytes.begin()))
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cairn;
  static const TierNamespace ns{"fuzz-model", "bf16", "prefix"};
  static const PageKey ns_key = ns.key();
  const std::span<const uint8_t> file(data, size);
  PageFileHeader h;
  parse_page_header(file, static_cast<int64_t>(size), ns_key, h);
  if (size < 64) return 0;
  PageKey key;  // the page key field, so that decoding gets past the key check
  std::memcpy(&key.hi, data + 48, 8);
  std::memcpy(&key.lo, data + 56, 8);
  PageRecord r;
  if (!decode_page_file(file, ns_key, key, r).ok()) return 0;
  const std::vector<uint8_t> again = encode_page_file(r, ns);
  PageRecord back;
  if (!decode_page_file(again, ns_key, key, back).ok() || !same(r, back)) std::abort();
  return 0;
}
