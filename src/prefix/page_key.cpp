#include "prefix/page_key.h"

#include <xxhash.h>

#include <vector>

namespace cairn {

namespace {

void put_u64(std::vector<uint8_t>& out, uint64_t x) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(x >> (8 * i)));
}

void put_key(std::vector<uint8_t>& out, const PageKey& k) {
  put_u64(out, k.hi);
  put_u64(out, k.lo);
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put_u64(out, s.size());  // the length keeps ("ab", "c") apart from ("a", "bc")
  out.insert(out.end(), s.begin(), s.end());
}

PageKey hash_bytes(std::span<const uint8_t> bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  PageKey k{h.high64, h.low64};
  if (k.empty()) k.lo = 1;  // empty means "no key"
  return k;
}

}  // namespace

PageKey content_key(std::span<const uint8_t> bytes) {
  return hash_bytes(bytes);
}

PageKey namespace_key(std::string_view model_fingerprint, std::string_view kv_scheme,
                      std::string_view tag) {
  std::vector<uint8_t> bytes;
  bytes.reserve(24 + model_fingerprint.size() + kv_scheme.size() + tag.size());
  put_string(bytes, model_fingerprint);
  put_string(bytes, kv_scheme);
  put_string(bytes, tag);
  return hash_bytes(bytes);
}

PageKey page_key(const PageKey& ns, const PageKey& parent, std::span<const int32_t> tokens) {
  std::vector<uint8_t> bytes;
  bytes.reserve(32 + 4 * tokens.size());
  put_key(bytes, ns);
  put_key(bytes, parent);
  for (int32_t t : tokens) {
    const auto u = static_cast<uint32_t>(t);
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
  return hash_bytes(bytes);
}

}  // namespace cairn
