// A compiled PCRE2 pattern (UTF + UCP, JIT when available) that lists match
// spans. The subject must be valid UTF-8 (Tokenizer::encode repairs it first).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn::tok {

class Regex {
 public:
  // Throws Error(kBadFile) quoting the pattern and PCRE2's message; `where` names its origin.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends [begin, end) of every non-empty, non-overlapping match within
  // subject[begin, end) (offsets relative to subject).
  void find_all(std::string_view subject, uint32_t begin, uint32_t end,
                std::vector<std::pair<uint32_t, uint32_t>>& out) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
  bool jit_ = false;
};

}  // namespace cairn::tok
