#include "backend/cuda/launch.h"

#include <atomic>
#include <cstdlib>

#include "backend/cuda/graph_store.h"

namespace cairn::cuda {
namespace {

std::atomic<Programmatic>& g_mode() {
  static std::atomic<Programmatic> mode = [] {
    const char* v = std::getenv("CAIRN_CUDA_PDL");
    if (v && v[0] == '0') return Programmatic::kOff;
    if (v && v[0] == '1') return Programmatic::kAll;
    return Programmatic::kEager;
  }();
  return mode;
}

}  // namespace

Programmatic programmatic_launch() {
  return g_mode().load();
}

void set_programmatic_launch(Programmatic mode) {
  g_mode().store(mode);
}

bool overlap_launch() {
  const Programmatic mode = g_mode().load();
  return mode == Programmatic::kAll || (mode == Programmatic::kEager && !capturing_uploads());
}

}  // namespace cairn::cuda
