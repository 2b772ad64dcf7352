#include "backend/cuda/rank_context.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "core/error.h"

namespace cairn::cuda {
namespace detail {

struct Context {
  int device = 0;
  cudaStream_t ops = nullptr, copies = nullptr;
  std::mutex mutex;
  std::vector<void*> locals;  // by slot; null: not made yet

  // Streams on the device current now.
  Context() {
    CAIRN_CUDA_CHECK(cudaGetDevice(&device));
    CAIRN_CUDA_CHECK(cudaStreamCreateWithFlags(&ops, cudaStreamNonBlocking));
    CAIRN_CUDA_CHECK(cudaStreamCreateWithFlags(&copies, cudaStreamNonBlocking));
  }
};

namespace {

thread_local Context* bound = nullptr;

// The kernels given more shared memory (allow_smem), and the devices of bound contexts, so that
// a context bound after a kernel's first launch, on another device, gets its attribute too.
struct SmemRegistry {
  std::mutex mutex;
  std::map<const void*, int> kernels;  // the most bytes asked
  std::vector<int> devices;
};

SmemRegistry& smem_registry() {
  static SmemRegistry* r = new SmemRegistry();
  return *r;
}

// Runs f with `device` current, then the calling thread's device again.
template <typename F>
void on_device(int device, F f) {
  int current = 0;
  CAIRN_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) CAIRN_CUDA_CHECK(cudaSetDevice(device));
  f();
  if (current != device) CAIRN_CUDA_CHECK(cudaSetDevice(current));
}

void set_smem_on(int device, const void* kernel, int bytes) {
  on_device(device, [&] {
    CAIRN_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  });
}

// A context's device joins the registry: every kernel's attribute is set on it.
void register_device(int device) {
  SmemRegistry& r = smem_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (std::find(r.devices.begin(), r.devices.end(), device) != r.devices.end()) return;
  r.devices.push_back(device);
  for (const auto& [kernel, bytes] : r.kernels) set_smem_on(device, kernel, bytes);
}

Context& process_context() {
  static Context* c = [] {
    auto* made = new Context();  // lives until exit
    register_device(made->device);
    return made;
  }();
  return *c;
}

}  // namespace

Context& current_context() {
  return bound ? *bound : process_context();
}

int next_local_slot() {
  static std::atomic<int> next{0};
  return next++;
}

void* context_slot(Context& c, int slot, void* (*make)()) {
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.locals.size() <= static_cast<size_t>(slot)) c.locals.resize(static_cast<size_t>(slot) + 1);
  void*& p = c.locals[static_cast<size_t>(slot)];
  if (p == nullptr) on_device(c.device, [&] { p = make(); });  // on the context's device
  return p;
}

}  // namespace detail

namespace {

// The contexts other threads enter on a device (enter_device_context), one a device.
detail::Context& visitors_context(int device) {
  static std::mutex mutex;
  static std::map<int, detail::Context*> made;  // live until exit
  std::lock_guard<std::mutex> lock(mutex);
  detail::Context*& c = made[device];
  if (c == nullptr) {
    detail::on_device(device, [&] { c = new detail::Context(); });
    detail::register_device(device);
  }
  return *c;
}

struct Entered {
  detail::Context* bound;  // the thread's own (null: the process's)
  int device;              // current before
};

void check_present(int device, const char* what) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || device < 0 || device >= n) {
    cudaGetLastError();
    fail(ErrorCode::kInvalidArgument, "{}: no CUDA device {} ({} present)", what, device, n);
  }
}

}  // namespace

void* enter_device_context(int device) {
  if (detail::current_context().device == device) return nullptr;
  check_present(device, "enter_device_context");
  detail::Context& c = visitors_context(device);
  int current = 0;
  CAIRN_CUDA_CHECK(cudaGetDevice(&current));
  CAIRN_CUDA_CHECK(cudaSetDevice(device));
  auto* e = new Entered{detail::bound, current};  // nothing past here throws
  detail::bound = &c;
  return e;
}

void leave_device_context(void* token) noexcept {
  if (token == nullptr) return;
  auto* e = static_cast<Entered*>(token);
  // Not checked (a destructor's path): a failure here shows at the next checked call.
  cudaStreamSynchronize(detail::bound->ops);
  cudaStreamSynchronize(detail::bound->copies);
  detail::bound = e->bound;
  cudaSetDevice(e->device);
  delete e;
}

void bind_thread_device(int device) {
  check_present(device, "bind_thread_device");
  CAIRN_CUDA_CHECK(cudaSetDevice(device));
  detail::bound = new detail::Context();  // lives until exit, as the process's
  detail::register_device(device);
}

void allow_smem_everywhere(const void* kernel, int bytes) {
  detail::SmemRegistry& r = detail::smem_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  int& most = r.kernels[kernel];
  most = std::max(most, bytes);
  int current = 0;
  CAIRN_CUDA_CHECK(cudaGetDevice(&current));
  detail::set_smem_on(current, kernel, most);
  for (int d : r.devices)
    if (d != current) detail::set_smem_on(d, kernel, most);
}

int context_device() {
  return detail::current_context().device;
}

cudaStream_t stream() {
  return detail::current_context().ops;
}

bool stream_capturing() {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  check(cudaStreamIsCapturing(stream(), &status), "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;
}

cudaStream_t copy_stream() {
  return detail::current_context().copies;
}

}  // namespace cairn::cuda
