// check_sample_rows (op_checks.h): the arguments of ops::sample_rows. The CUDA
// entry relies on them: distinct penalized and counted ids (one thread per id
// edits the row), ids inside the row, a vocabulary below 2^24 (its fixed-point
// probability masses), results that fit their tensors.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/op_checks.h"
#include "core/error.h"

namespace cairn::ops {
namespace {

constexpr const char* kOp = "sample_rows";
constexpr int64_t kMaxVocab = int64_t{1} << 24;

// Row i's chain and penalty values in range.
void check_values(const SampleRow& r, size_t i) {
  auto bad = [&](const char* what, double got) {
    fail(ErrorCode::kInvalidArgument, "{}: rows[{}].{} (got {})", kOp, i, what, got);
  };
  if (!(r.temperature >= 0.0f) || !std::isfinite(r.temperature))
    bad("temperature must be finite and ≥ 0", r.temperature);
  if (r.top_k < 0) bad("top_k must be ≥ 0", r.top_k);
  if (!(r.top_p > 0.0f && r.top_p <= 1.0f)) bad("top_p must be in (0, 1]", r.top_p);
  if (!(r.min_p >= 0.0f && r.min_p <= 1.0f)) bad("min_p must be in [0, 1]", r.min_p);
  if (r.n_top > kMaxSampleTop) bad("n_top must be ≤ 256", r.n_top);
  if (!(r.repetition_penalty > 0.0f) || !std::isfinite(r.repetition_penalty))
    bad("repetition_penalty must be finite and > 0", r.repetition_penalty);
  if (!std::isfinite(r.presence_penalty)) bad("presence_penalty must be finite", 0);
  if (!std::isfinite(r.frequency_penalty)) bad("frequency_penalty must be finite", 0);
  for (const LogitBias& b : r.bias)
    if (!std::isfinite(b.bias)) bad("bias must be finite", b.bias);
  for (const IdCount& c : r.counted)
    if (c.count < 1) bad("counted's counts must be ≥ 1", c.count);
}

// Marks ids seen in one list; stamps avoid clearing the [vocab] array per list.
class DistinctIds {
 public:
  explicit DistinctIds(int64_t vocab) {
    if (static_cast<int64_t>(seen_.size()) < vocab) seen_.assign(static_cast<size_t>(vocab), 0);
  }
  // Error(kInvalidArgument) on an id outside [0, vocab) or (when `distinct`) seen twice.
  template <typename List, typename IdOf>
  void check(const List& list, IdOf id_of, int64_t vocab, bool distinct, size_t i,
             const char* name) {
    if (++stamp_ == 0) std::fill(seen_.begin(), seen_.end(), stamp_++);
    for (const auto& e : list) {
      const int32_t id = id_of(e);
      if (id < 0 || id >= vocab)
        fail(ErrorCode::kInvalidArgument, "{}: rows[{}].{}: id {} is outside [0, {})", kOp, i, name,
             id, vocab);
      if (!distinct) continue;
      uint32_t& s = seen_[static_cast<size_t>(id)];
      if (s == stamp_)
        fail(ErrorCode::kInvalidArgument, "{}: rows[{}].{}: id {} appears twice", kOp, i, name, id);
      s = stamp_;
    }
  }

 private:
  static thread_local std::vector<uint32_t> seen_;
  static thread_local uint32_t stamp_;
};

thread_local std::vector<uint32_t> DistinctIds::seen_;
thread_local uint32_t DistinctIds::stamp_ = 0;

void check_lists(const SampleRow& r, size_t i, int64_t vocab) {
  DistinctIds ids(vocab);
  auto plain = [](int32_t id) { return id; };
  ids.check(
      r.bias, [](const LogitBias& b) { return b.id; }, vocab, false, i, "bias");
  ids.check(r.penalized, plain, vocab, true, i, "penalized");
  ids.check(
      r.counted, [](const IdCount& c) { return c.id; }, vocab, true, i, "counted");
  ids.check(r.masked, plain, vocab, false, i, "masked");
}

// A contiguous output of `dtype` and `shape` on `device`.
void need_output(const char* name, const Tensor* t, DType dtype, const Shape& shape,
                 const Device& device) {
  if (!t || !t->defined()) fail(ErrorCode::kInvalidArgument, "{}: out.{} is missing", kOp, name);
  if (t->dtype() != dtype || !(t->shape() == shape) || !t->is_contiguous())
    fail(ErrorCode::kInvalidArgument, "{}: out.{} is {}, expected contiguous {}{}", kOp, name,
         t->describe(), dtype_name(dtype), shape.to_string());
  if (!(t->device() == device))
    fail(ErrorCode::kInvalidArgument, "{}: out.{} {} is not on the outputs' device", kOp, name,
         t->describe());
}

void check_outputs(const Tensor& logits, std::span<const SampleRow> rows,
                   const SampleOutputs& out) {
  const auto n = static_cast<int64_t>(rows.size());
  if (!out.ids || !out.ids->defined())
    fail(ErrorCode::kInvalidArgument, "{}: out.ids is missing", kOp);
  const Device device = out.ids->device();
  if (!(device == Device::cpu() || device == logits.device()))
    fail(ErrorCode::kInvalidArgument, "{}: outputs on {} are neither on the host nor on {}", kOp,
         out.ids->describe(), logits.describe());
  need_output("ids", out.ids, DType::kI32, {n}, device);
  need_output("logprobs", out.logprobs, DType::kF32, {n}, device);
  int32_t max_top = 0;
  for (const SampleRow& r : rows) max_top = std::max(max_top, r.n_top);
  if (!out.top_ids && !out.top_logprobs && max_top <= 0) return;
  const int64_t width = out.top_ids && out.top_ids->ndim() == 2 ? out.top_ids->dim(1) : 0;
  if (width < max_top)
    fail(ErrorCode::kInvalidArgument, "{}: out.top_ids must be [{}, ≥ {}] (a row's n_top)", kOp, n,
         max_top);
  need_output("top_ids", out.top_ids, DType::kI32, {n, width}, device);
  need_output("top_logprobs", out.top_logprobs, DType::kF32, {n, width}, device);
}

}  // namespace

void check_sample_rows(const Tensor& logits, std::span<const SampleRow> rows,
                       const SampleOutputs& out) {
  if (!logits.defined() || logits.ndim() != 2 || logits.dtype() != DType::kF32 ||
      !logits.is_contiguous())
    fail(ErrorCode::kInvalidArgument, "{}: logits must be contiguous f32 [rows, vocab] (got {})",
         kOp, logits.defined() ? logits.describe() : std::string("undefined"));
  if (logits.dim(0) != static_cast<int64_t>(rows.size()))
    fail(ErrorCode::kInvalidArgument, "{}: logits has {} rows, rows has {}", kOp, logits.dim(0),
         rows.size());
  const int64_t vocab = logits.dim(1);
  if (vocab < 1 || vocab >= kMaxVocab)
    fail(ErrorCode::kInvalidArgument, "{}: vocab {} is outside [1, 2^24)", kOp, vocab);
  for (size_t i = 0; i < rows.size(); ++i) {
    check_values(rows[i], i);
    check_lists(rows[i], i, vocab);
  }
  check_outputs(logits, rows, out);
}

}  // namespace cairn::ops
