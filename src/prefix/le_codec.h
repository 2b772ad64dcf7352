// Little-endian field writers and bounded readers shared by the self-describing
// files of the prefix layer (page files, generation checkpoints). Internal to
// src/prefix/.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kv/page_meta.h"

namespace cairn::le {

inline uint64_t round_up(uint64_t x, uint64_t a) {
  return (x + a - 1) / a * a;
}

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t x) { out_.push_back(x); }
  void u32(uint32_t x) { le(x, 4); }
  void u64(uint64_t x) { le(x, 8); }
  void f32(float x) { u32(std::bit_cast<uint32_t>(x)); }
  void key(const PageKey& k) { u64(k.hi), u64(k.lo); }
  void bytes(std::string_view s) {
    const size_t at = out_.size();
    out_.resize(at + s.size());
    if (!s.empty()) std::memcpy(out_.data() + at, s.data(), s.size());
  }
  void pad_to(size_t a) { out_.resize(round_up(out_.size(), a), 0); }
  void set_u32(size_t at, uint32_t x) { std::memcpy(out_.data() + at, &x, 4); }  // LE hosts only

 private:
  void le(uint64_t x, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<uint8_t>(x >> (8 * i)));
  }
  std::vector<uint8_t>& out_;
};

// Reads little-endian fields; a read past the end sets `short_` and yields 0.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}
  uint64_t le(int n) {
    if (pos_ + static_cast<size_t>(n) > b_.size()) return short_ = true, pos_ = b_.size(), 0;
    uint64_t x = 0;
    for (int i = 0; i < n; ++i) x |= uint64_t{b_[pos_ + static_cast<size_t>(i)]} << (8 * i);
    pos_ += static_cast<size_t>(n);
    return x;
  }
  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  float f32() { return std::bit_cast<float>(u32()); }
  uint64_t u64() { return le(8); }
  PageKey key() {
    PageKey k;
    k.hi = u64(), k.lo = u64();
    return k;
  }
  std::string str(uint32_t n) {
    if (pos_ + n > b_.size()) return short_ = true, pos_ = b_.size(), std::string();
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  void skip(size_t n) { pos_ = pos_ + n > b_.size() ? (short_ = true, b_.size()) : pos_ + n; }
  void align(size_t a) { skip(round_up(pos_, a) - pos_); }
  size_t pos() const { return pos_; }
  size_t remaining() const { return b_.size() - pos_; }
  bool short_read() const { return short_; }

 private:
  std::span<const uint8_t> b_;
  size_t pos_ = 0;
  bool short_ = false;
};

}  // namespace cairn::le
