#include "backend/op_table.h"

#include <array>
#include <mutex>

#include "backend/cpu/cpu_backend.h"
#ifdef CAIRN_HAVE_CUDA
#include "backend/cuda/cuda_ops.h"
#endif
#include "core/error.h"

namespace cairn::ops {
namespace {

constexpr size_t kDeviceKinds = 2;

struct Registry {
  std::mutex mutex;
  std::array<OpTable, kDeviceKinds> tables{};
  std::array<bool, kDeviceKinds> present{};
};

Registry& registry() {
  static Registry r;
  return r;
}

bool complete(const OpTable& t) {
  return t.matmul && t.embedding && t.rms_norm && t.layer_norm && t.rope && t.attention &&
         t.attention_seqs && t.attention_pages && t.split_columns && t.gated_activation &&
         t.gated_activation_fused && t.add && t.scale && t.softcap && t.softmax && t.log_softmax &&
         t.convert && t.convert_rows && t.quantize_rows && t.sample_rows;
}

}  // namespace

void register_op_table(DeviceKind kind, const OpTable& table) {
  CAIRN_CHECK(complete(table), "op table for device kind {} has empty entries",
              static_cast<int>(kind));
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.tables[static_cast<size_t>(kind)] = table;
  r.present[static_cast<size_t>(kind)] = true;
}

const OpTable& op_table(DeviceKind kind) {
  // The built-in CPU backend registers itself here rather than from a static
  // initializer, which a static library's linker may drop.
  static std::once_flag cpu_once;
  std::call_once(cpu_once, [] {
    cpu::register_cpu_backend();
#ifdef CAIRN_HAVE_CUDA
    cuda::register_cuda_ops();  // registering launches nothing: fine without a GPU
#endif
  });
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.present[static_cast<size_t>(kind)])
    fail(ErrorCode::kUnsupported, "no backend for device kind {} is built in",
         kind == DeviceKind::kCuda ? "cuda" : "cpu");
  return r.tables[static_cast<size_t>(kind)];
}

}  // namespace cairn::ops
