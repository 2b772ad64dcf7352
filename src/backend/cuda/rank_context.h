// Rank contexts: the CUDA backend's state that belongs to one stream of ops, one per thread
// that drives a GPU of its own (a tensor-parallel rank), instead of one per process.
//
// A context holds a device, the ops' stream and the copy stream on it (stream(), copy_stream()
// in cuda_runtime.h), and the objects ops keep beside their stream: the upload ring, growable
// scratch and staging buffers, the attention workspace, the cuBLASLt handle and workspace, the
// graphs' argument rooms (context_local<T>). A thread that never binds shares the process's
// context: the device current at its first use (device 0 unless the thread chose another) —
// how every single-GPU run works. bind_thread_device gives the calling thread a context of its
// own on a device, so that two ranks never share a stream, a workspace or a reuse order, even
// on one GPU. Contexts and what they hold live until exit: kernels may still read them.
// Process-wide settings (the batch-invariant switch, the overlap mode, the tile choices) and
// what depends only on the device type (sm_count) stay per process; kernels' shared-memory
// attributes (allow_smem) are set on every device a context is bound to.
#pragma once

#include <cuda_runtime.h>

namespace cairn::cuda {

// Makes `device` current on the calling thread and gives the thread a new context on it (its
// own streams and context_local objects; a rank thread binds once, before its first op).
// Error(kInvalidArgument) for a device not present.
void bind_thread_device(int device);
// The device of the calling thread's context.
int context_device();
// Until leave_device_context(token), the calling thread's ops run on `device` in the context
// kept there for other threads' work on its memory (the engine's on a tensor-parallel KV
// shard: DeviceBackend::enter_device), made on first use; a null token, changing nothing, when
// the thread's context is on `device` already. Error(kInvalidArgument) for a device not
// present.
void* enter_device_context(int device);
// Waits for the work the thread issued in that context, then gives it back its own context
// and current device. A null token does nothing.
void leave_device_context(void* token) noexcept;

namespace detail {
struct Context;
Context& current_context();
int next_local_slot();
// The object in slot `slot` of context c, made by make() the first time.
void* context_slot(Context& c, int slot, void* (*make)());
}  // namespace detail

// The calling thread's context's T (default-constructed there on first use, with the context's
// device current; never destroyed). Thread-safe; after the first call a thread-local lookup.
template <typename T>
T& context_local() {
  static const int slot = detail::next_local_slot();
  thread_local detail::Context* cached_for = nullptr;
  thread_local T* cached = nullptr;
  detail::Context& c = detail::current_context();
  if (&c != cached_for) {
    cached =
        static_cast<T*>(detail::context_slot(c, slot, [] { return static_cast<void*>(new T()); }));
    cached_for = &c;
  }
  return *cached;
}

}  // namespace cairn::cuda
