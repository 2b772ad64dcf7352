#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

#include "core/error.h"

namespace cairn::tok {
namespace {

// Per-thread match state: a match-data block and a JIT stack large enough for
// long runs matched by backtracking patterns such as \s+(?!\S).
struct ThreadState {
  pcre2_match_data* data = pcre2_match_data_create(4, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  ThreadState() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~ThreadState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

}  // namespace

Regex::Regex(const std::string& pattern, const std::string& where) : pattern_(pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    fail(ErrorCode::kBadFile, "{}: regex '{}' does not compile at offset {}: {}", where, pattern,
         offset, reinterpret_cast<const char*>(message));
  }
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  code_ = code;
}

Regex::~Regex() {
  pcre2_code_free(static_cast<pcre2_code*>(code_));
}

void Regex::find_all(std::string_view subject, uint32_t begin, uint32_t end,
                     std::vector<std::pair<uint32_t, uint32_t>>& out) const {
  ThreadState& state = thread_state();
  auto* code = static_cast<pcre2_code*>(code_);
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  PCRE2_SIZE pos = begin;
  while (pos < end) {
    // The subject ends at `end` so lookaheads see only this piece, as HF's split does.
    const int rc =
        jit_ ? pcre2_jit_match(code, text, end, pos, PCRE2_NO_UTF_CHECK, state.data, state.context)
             : pcre2_match(code, text, end, pos, PCRE2_NO_UTF_CHECK, state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0)
      fail(ErrorCode::kInternal, "regex '{}' failed to match (PCRE2 error {})", pattern_, rc);
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(state.data);
    if (ov[1] > ov[0]) {
      out.push_back({static_cast<uint32_t>(ov[0]), static_cast<uint32_t>(ov[1])});
      pos = ov[1];
    } else {
      // An empty match: step over one character.
      pos = ov[0] + 1;
      while (pos < end && (text[pos] & 0xC0) == 0x80) ++pos;
    }
  }
}

}  // namespace cairn::tok
