// Helpers that turn vocabulary pieces into the bytes they decode to.
#include "tokenizer/parts.h"

namespace cairn::tok {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

int parse_byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  const int hi = hex_value(piece[3]), lo = hex_value(piece[4]);
  if (hi < 0 || lo < 0) return -1;
  return hi * 16 + lo;
}

std::string sentencepiece_piece_bytes(std::string_view piece, std::string_view marker,
                                      bool is_byte_token) {
  if (is_byte_token) {
    const int byte = parse_byte_piece(piece);
    if (byte >= 0) return std::string(1, static_cast<char>(byte));
  }
  std::string out;
  out.reserve(piece.size());
  for (size_t pos = 0; pos < piece.size();) {
    if (!marker.empty() && piece.compare(pos, marker.size(), marker) == 0) {
      out.push_back(' ');
      pos += marker.size();
    } else {
      out.push_back(piece[pos++]);
    }
  }
  return out;
}

}  // namespace cairn::tok
