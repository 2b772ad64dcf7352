#include "prefix/checkpoint_file.h"

#include <xxhash.h>

#include "core/error.h"
#include "prefix/le_codec.h"
#include "prefix/page_key.h"

namespace cairn {

namespace {

using le::Reader;
using le::Writer;

constexpr char kMagic[8] = {'C', 'A', 'I', 'R', 'N', 'C', 'K', 'P'};
constexpr uint32_t kHeaderBytes = 128;  // fixed part, its checksum last
constexpr int64_t kMaxTokens = int64_t{1} << 24;
constexpr uint32_t kMaxString = 4096, kMaxTop = 64;
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;
constexpr uint8_t kSeedChosen = 1, kQuantized = 2, kLogprobs = 4;

PageFileCheck bad(PageFileError e, std::string detail) {
  return {e, std::move(detail)};
}

// The fixed part after magic and version, as read.
struct Fixed {
  uint32_t header_bytes = 0;
  uint64_t file_bytes = 0, step = 0, n_prompt = 0;
  PageKey ns;
  int32_t pending = 0;
  uint32_t page_tokens = 0, n_pages = 0;
  uint8_t flags = 0;
  uint32_t lens[3] = {0, 0, 0};
};

PageFileCheck read_fixed(Reader& r, Fixed& f, Checkpoint& c) {
  f.header_bytes = r.u32();
  f.file_bytes = r.u64();
  f.ns = r.key(), c.key = r.key();
  f.step = r.u64();
  c.seed = r.u64();
  f.n_prompt = r.u64();
  f.pending = static_cast<int32_t>(r.u32());
  f.page_tokens = r.u32(), f.n_pages = r.u32();
  f.flags = r.u8();
  r.skip(3);
  for (uint32_t& n : f.lens) n = r.u32();
  const bool sizes_ok = f.header_bytes == kHeaderBytes && f.step >= 1 && f.n_prompt >= 1 &&
                        f.n_prompt + f.step <= static_cast<uint64_t>(kMaxTokens) &&
                        f.page_tokens >= 1 && f.n_pages <= (f.n_prompt + f.step) / f.page_tokens &&
                        f.lens[0] <= kMaxString && f.lens[1] <= kMaxString &&
                        f.lens[2] <= kMaxString && f.file_bytes <= kMaxFileBytes &&
                        f.file_bytes >= kHeaderBytes + 8 && f.flags < 8;
  if (!sizes_ok) return bad(PageFileError::kBadHeader, "step, n_prompt, pages, lengths or sizes");
  return {};
}

PageFileCheck read_logprobs(Reader& r, int64_t step, Checkpoint& c) {
  c.logprobs.resize(static_cast<size_t>(step));
  c.top.resize(static_cast<size_t>(step));
  for (int64_t i = 0; i < step; ++i) {
    c.logprobs[static_cast<size_t>(i)] = r.f32();
    const uint32_t n = r.u32();
    if (n > kMaxTop) return bad(PageFileError::kBadHeader, fmt::format("token {}: {} top", i, n));
    for (uint32_t j = 0; j < n; ++j) {
      const auto id = static_cast<int32_t>(r.u32());
      c.top[static_cast<size_t>(i)].push_back({id, r.f32()});
    }
  }
  return {};
}

// The body after the fixed part: strings, tokens, pages, logprobs.
PageFileCheck read_body(Reader& r, const Fixed& f, TierNamespace& ns, Checkpoint& c) {
  ns.fingerprint = r.str(f.lens[0]);
  ns.scheme = r.str(f.lens[1]);
  ns.tag = r.str(f.lens[2]);
  r.align(4);
  c.tokens.resize(static_cast<size_t>(f.n_prompt + f.step));
  for (int32_t& t : c.tokens) t = static_cast<int32_t>(r.u32());
  c.pages.resize(f.n_pages);
  for (CheckpointPage& p : c.pages) {
    const uint8_t source = r.u8();
    r.skip(7);
    p.key = r.key();
    if (source > 1) return bad(PageFileError::kBadHeader, "page source");
    p.source = static_cast<PageSource>(source);
  }
  if (c.has_logprobs) {
    PageFileCheck lc = read_logprobs(r, static_cast<int64_t>(f.step), c);
    if (!lc.ok()) return lc;
  }
  if (r.short_read()) return bad(PageFileError::kTruncated, "body shorter than its fields");
  if (r.remaining() != 8) return bad(PageFileError::kBadHeader, "bytes after the last field");
  if (c.tokens.back() != f.pending)
    return bad(PageFileError::kBadHeader, "the pending token is not the last token");
  return {};
}

}  // namespace

void encode_checkpoint_file(const Checkpoint& c, const TierNamespace& ns,
                            std::vector<uint8_t>& out) {
  CAIRN_CHECK(c.n_prompt >= 1 && c.step() >= 1 && c.page_tokens >= 1,
              "checkpoint without prompt, emitted tokens or page size");
  out.clear();
  Writer w(out);
  w.bytes(std::string_view(kMagic, 8));
  w.u32(kCheckpointFileVersion), w.u32(kHeaderBytes);
  w.u64(0);  // file_bytes, set below
  w.key(ns.key()), w.key(c.key);
  w.u64(static_cast<uint64_t>(c.step())), w.u64(c.seed), w.u64(static_cast<uint64_t>(c.n_prompt));
  w.u32(static_cast<uint32_t>(c.tokens.back()));
  w.u32(static_cast<uint32_t>(c.page_tokens)), w.u32(static_cast<uint32_t>(c.pages.size()));
  w.u8(static_cast<uint8_t>((c.seed_chosen ? kSeedChosen : 0) | (c.quantized ? kQuantized : 0) |
                            (c.has_logprobs ? kLogprobs : 0)));
  w.u8(0), w.u8(0), w.u8(0);
  for (const std::string* s : {&ns.fingerprint, &ns.scheme, &ns.tag})
    w.u32(static_cast<uint32_t>(s->size()));
  w.u32(0), w.u32(0), w.u32(0);
  w.u64(XXH3_64bits(out.data(), out.size()));  // header checksum, at kHeaderBytes - 8
  w.bytes(ns.fingerprint), w.bytes(ns.scheme), w.bytes(ns.tag);
  w.pad_to(4);
  for (int32_t t : c.tokens) w.u32(static_cast<uint32_t>(t));
  for (const CheckpointPage& p : c.pages) {
    w.u8(static_cast<uint8_t>(p.source));
    for (int i = 0; i < 7; ++i) w.u8(0);
    w.key(p.key);
  }
  for (size_t i = 0; c.has_logprobs && i < static_cast<size_t>(c.step()); ++i) {
    w.f32(i < c.logprobs.size() ? c.logprobs[i] : 0.0f);
    const std::vector<SavedLogprob> none;
    const std::vector<SavedLogprob>& top = i < c.top.size() ? c.top[i] : none;
    w.u32(static_cast<uint32_t>(top.size()));
    for (const SavedLogprob& t : top) w.u32(static_cast<uint32_t>(t.id)), w.f32(t.logprob);
  }
  const uint64_t file_bytes = out.size() + 8;
  std::memcpy(out.data() + 16, &file_bytes, 8);  // LE hosts only, as set_u32
  // The header checksum covers file_bytes: recompute it now that it is known.
  const uint64_t header_sum = XXH3_64bits(out.data(), kHeaderBytes - 8);
  std::memcpy(out.data() + kHeaderBytes - 8, &header_sum, 8);
  w.u64(XXH3_64bits(out.data(), out.size()));
}

PageFileCheck decode_checkpoint_file(std::span<const uint8_t> file, const PageKey& expect_ns,
                                     const PageKey& expect_key, Checkpoint& out) {
  if (file.size() < 16) return bad(PageFileError::kTruncated, "shorter than the magic");
  if (std::memcmp(file.data(), kMagic, 8) != 0) return bad(PageFileError::kBadMagic, "magic");
  Reader r(file);
  r.skip(8);
  if (const uint32_t v = r.u32(); v != kCheckpointFileVersion)
    return bad(PageFileError::kBadVersion, fmt::format("format version {}", v));
  if (file.size() < kHeaderBytes) return bad(PageFileError::kTruncated, "shorter than a header");
  uint64_t stored = 0;
  std::memcpy(&stored, file.data() + kHeaderBytes - 8, 8);
  if (XXH3_64bits(file.data(), kHeaderBytes - 8) != stored)
    return bad(PageFileError::kHeaderChecksum, "header checksum");
  Checkpoint c;
  Fixed f;
  if (PageFileCheck fc = read_fixed(r, f, c); !fc.ok()) return fc;
  if (file.size() != f.file_bytes)
    return bad(file.size() < f.file_bytes ? PageFileError::kTruncated : PageFileError::kBadHeader,
               fmt::format("file of {} bytes, header says {}", file.size(), f.file_bytes));
  std::memcpy(&stored, file.data() + file.size() - 8, 8);
  if (XXH3_64bits(file.data(), file.size() - 8) != stored)
    return bad(PageFileError::kPayloadChecksum, "file checksum");
  c.seed_chosen = (f.flags & kSeedChosen) != 0;
  c.quantized = (f.flags & kQuantized) != 0;
  c.has_logprobs = (f.flags & kLogprobs) != 0;
  c.n_prompt = static_cast<int64_t>(f.n_prompt);
  c.page_tokens = f.page_tokens;
  r.skip(kHeaderBytes - r.pos());
  TierNamespace ns;
  if (PageFileCheck bc = read_body(r, f, ns, c); !bc.ok()) return bc;
  if (f.ns != expect_ns || ns.key() != f.ns)
    return bad(
        PageFileError::kWrongNamespace,
        fmt::format("fingerprint '{}', scheme '{}', tag '{}'", ns.fingerprint, ns.scheme, ns.tag));
  if (!expect_key.empty() && c.key != expect_key)
    return bad(PageFileError::kWrongKey, "not the checkpoint of the request asked for");
  out = std::move(c);
  return {};
}

}  // namespace cairn
