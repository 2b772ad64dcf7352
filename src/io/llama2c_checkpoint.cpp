#include "io/llama2c_checkpoint.h"

#include <cstring>
#include <fstream>

#include "core/error.h"

namespace cairn::io {
namespace {

constexpr size_t kHeaderBytes = 7 * 4;

// A header whose fields are in range, or an error message naming the bad field.
std::string check_header(const int32_t raw[7], Llama2cHeader* h) {
  const char* names[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                          "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i) {
    int64_t v = raw[i] < 0 && i == 5 ? -static_cast<int64_t>(raw[i]) : raw[i];
    if (v <= 0 || v > (1 << 24))
      return fmt::format("field '{}' = {} is out of range", names[i], raw[i]);
  }
  h->dim = raw[0];
  h->hidden_dim = raw[1];
  h->n_layers = raw[2];
  h->n_heads = raw[3];
  h->n_kv_heads = raw[4];
  h->shared_classifier = raw[5] > 0;
  h->vocab_size = raw[5] > 0 ? raw[5] : -raw[5];
  h->seq_len = raw[6];
  if (h->dim % h->n_heads != 0) return "field 'dim' is not a multiple of 'n_heads'";
  if (h->n_heads % h->n_kv_heads != 0) return "field 'n_heads' is not a multiple of 'n_kv_heads'";
  return "";
}

// Floats the header implies, rope tables and classifier included.
uint64_t expected_floats(const Llama2cHeader& h) {
  uint64_t d = h.dim, f = h.hidden_dim, l = h.n_layers, v = h.vocab_size;
  uint64_t hd = d / h.n_heads, kv = h.n_kv_heads * hd;
  uint64_t n = v * d + l * d + l * d * d + 2 * l * kv * d + l * d * d + l * d + 3 * l * f * d + d;
  n += static_cast<uint64_t>(h.seq_len) * hd;  // two legacy rope tables of seq_len × hd/2
  if (!h.shared_classifier) n += v * d;
  return n;
}

bool read_header(const std::string& path, int32_t raw[7], uint64_t* file_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  *file_bytes = static_cast<uint64_t>(in.tellg());
  if (*file_bytes < kHeaderBytes) return false;
  in.seekg(0);
  in.read(reinterpret_cast<char*>(raw), kHeaderBytes);
  return static_cast<bool>(in);
}

}  // namespace

bool is_llama2c_checkpoint(const std::string& path) {
  int32_t raw[7];
  uint64_t bytes = 0;
  if (!read_header(path, raw, &bytes)) return false;
  Llama2cHeader h;
  if (!check_header(raw, &h).empty()) return false;
  return kHeaderBytes + expected_floats(h) * 4 == bytes;
}

Llama2cCheckpoint load_llama2c_checkpoint(const std::string& path) {
  auto file = MappedFile::open(path);
  Llama2cCheckpoint c;
  c.path = path;
  c.file_bytes = file->size_bytes();
  if (c.file_bytes < kHeaderBytes)
    fail(ErrorCode::kBadFile, "{}: truncated: {} bytes, shorter than the 28-byte header", path,
         c.file_bytes);
  int32_t raw[7];
  std::memcpy(raw, file->data(), kHeaderBytes);
  std::string why = check_header(raw, &c.header);
  if (!why.empty()) fail(ErrorCode::kBadFile, "{}: llama2.c header: {}", path, why);
  const Llama2cHeader& h = c.header;
  uint64_t want = kHeaderBytes + expected_floats(h) * 4;
  if (want != c.file_bytes)
    fail(ErrorCode::kBadFile, "{}: {} bytes, but the llama2.c header implies {}", path,
         c.file_bytes, want);
  int64_t d = h.dim, f = h.hidden_dim, l = h.n_layers, v = h.vocab_size;
  int64_t hd = d / h.n_heads, q = h.n_heads * hd, kv = h.n_kv_heads * hd;
  size_t off = kHeaderBytes;
  auto take = [&](const Shape& s) {
    size_t bytes = static_cast<size_t>(s.numel()) * 4;
    Tensor t = Tensor::view_of(borrow_mapped(file, off, bytes), 0, s, DType::kF32);
    off += bytes;
    return t;
  };
  c.token_embedding = take({v, d});
  c.rms_att = take({l, d});
  c.wq = take({l, q, d});
  c.wk = take({l, kv, d});
  c.wv = take({l, kv, d});
  c.wo = take({l, d, q});
  c.rms_ffn = take({l, d});
  c.w1 = take({l, f, d});
  c.w2 = take({l, d, f});
  c.w3 = take({l, f, d});
  c.rms_final = take({d});
  off += static_cast<size_t>(h.seq_len) * static_cast<size_t>(hd) * 4;  // legacy rope tables
  c.classifier = h.shared_classifier ? c.token_embedding : take({v, d});
  return c;
}

}  // namespace cairn::io
