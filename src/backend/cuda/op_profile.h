// Op profiling on the GPU (`cairn bench --device cuda --profile-ops`): while on, every
// entry of the CUDA op table is timed twice, on the host (call to return: the launch
// cost, argument uploads included) and on the device (events recorded on stream()
// before and after: the kernels' time, plus any gap the host leaves inside the op).
// The report also gives the window's wall time, so that time outside every op (the
// model's own host work, allocations) and idle device time show.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>

#include "core/tensor.h"

namespace cairn::cuda {

// Starts a window: drops what was recorded before and, the first time, installs the timed
// op table (cuda_ops.cpp; outside a window its entries only test a flag). Call it while no
// other thread issues ops.
void start_op_profile();
// Ends the window (after synchronizing the stream) and returns its table: per op
// (matmul by shape) calls, host µs a call, device µs a call and the share of the
// device time, then the totals against the window's wall time.
std::string stop_op_profile();

namespace profile_detail {

bool active();
size_t before();  // records the op's first event; returns its index
void after(std::string label, double host_us, size_t first_event);

// An op's row in the report: matmul by its shape, the rest by name.
std::string label(const char* name, const Tensor& x, const Tensor& w, const Tensor*, const Tensor&);
template <typename... A>
std::string label(const char* name, const A&...) {
  return name;
}

template <size_t N>
struct Name {
  char s[N];
  constexpr Name(const char (&a)[N]) { std::copy_n(a, N, s); }
};

}  // namespace profile_detail

// Timed<"op", &op>::call: the op entry `op`, timed inside a window.
template <profile_detail::Name N, auto F>
struct Timed;

template <profile_detail::Name N, typename... A, void (*F)(A...)>
struct Timed<N, F> {
  static void call(A... a) {
    namespace d = profile_detail;
    if (!d::active()) return F(a...);
    const size_t first = d::before();
    const auto t0 = std::chrono::steady_clock::now();
    F(a...);
    const auto host = std::chrono::steady_clock::now() - t0;
    d::after(d::label(N.s, a...), std::chrono::duration<double, std::micro>(host).count(), first);
  }
};

}  // namespace cairn::cuda
