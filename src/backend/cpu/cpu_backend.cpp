#include "backend/cpu/cpu_backend.h"

#include <cpuid.h>

#include <atomic>

#include "backend/cpu/fast/fast.h"
#include "backend/cpu/kv_pages.h"
#include "backend/cpu/kv_rows.h"
#include "backend/cpu/reference/reference.h"
#include "backend/cpu/split_columns.h"
#include "core/error.h"

namespace cairn::ops::cpu {
namespace {

std::atomic<Isa>& active_slot() {
  static std::atomic<Isa> isa{detected_isa()};
  return isa;
}

// F16C from CPUID leaf 1 (clang's __builtin_cpu_supports does not know "f16c").
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}

}  // namespace

Isa detected_isa() {
  __builtin_cpu_init();
  const bool f16c = has_f16c();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma") && f16c)
    return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c) return Isa::kAvx2;
  return Isa::kScalar;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

Isa active_isa() {
  return active_slot().load(std::memory_order_relaxed);
}

void set_active_isa(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(detected_isa()))
    fail(ErrorCode::kUnsupported, "this processor lacks {} (it has {})", isa_name(isa),
         isa_name(detected_isa()));
  active_slot().store(isa, std::memory_order_relaxed);
}

const OpTable& reference_table() {
  static const OpTable table = [] {
    OpTable t;
    t.matmul = ref::matmul;
    t.embedding = ref::embedding;
    t.rms_norm = ref::rms_norm;
    t.layer_norm = ref::layer_norm;
    t.rope = ref::rope;
    t.attention = ref::attention;
    t.attention_seqs = ref::attention_seqs;
    t.attention_pages = cpu::attention_pages;  // one gather for both tables
    t.gated_activation = ref::gated_activation;
    t.gated_activation_fused = ref::gated_activation_fused;
    t.add = ref::add;
    t.scale = ref::scale;
    t.softcap = ref::softcap;
    t.softmax = ref::softmax;
    t.log_softmax = ref::log_softmax;
    t.convert = ref::convert;
    t.convert_rows = ref::convert_rows;
    t.quantize_rows = cpu::quantize_rows;  // one encoding for both tables
    t.split_columns = cpu::split_columns;
    t.sample_rows = ref::sample_rows;  // one sampling for both tables
    return t;
  }();
  return table;
}

const OpTable& fast_table() {
  static const OpTable table = [] {
    OpTable t = reference_table();
    fast::fill_table(t);
    return t;
  }();
  return table;
}

void register_cpu_backend() {
  register_op_table(DeviceKind::kCpu, fast_table());
}

void use_reference_ops(bool use_reference) {
  register_op_table(DeviceKind::kCpu, use_reference ? reference_table() : fast_table());
}

}  // namespace cairn::ops::cpu
