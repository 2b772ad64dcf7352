// libcairn_kernel_trace.so: a CUDA injection library (CUDA_INJECTION64_PATH) that records the
// start and end of every kernel the process runs through CUPTI's activity API and writes them,
// at exit, as CSV to $CAIRN_KERNEL_TRACE (default kernel_trace.csv):
//   name,start_ns,end_ns,grid_x,grid_y,grid_z,block_x,graph
// name: the demangled function name up to its template arguments; graph: 1 for a kernel that
// ran as a node of a CUDA graph. Unlike `cairn bench --profile-ops`, which brackets every op
// with events, nothing is inserted into the streams, so overlapped launches keep overlapping;
// tools/gpu/kernel_trace.py turns the file into time a step spends in each kernel.
#include <cupti.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Kernel {
  std::string name;
  uint64_t start, end;
  int32_t grid[3], block_x;
  bool graph;
};

std::mutex g_mutex;
std::vector<Kernel>* g_kernels = new std::vector<Kernel>();  // lives past static destruction

constexpr size_t kBufferBytes = 8 << 20;

// "void cairn::cuda::(anonymous namespace)::thin_kernel<1, 1, ...>(...)" → "thin_kernel".
std::string short_name(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : mangled;
  std::free(d);
  for (size_t at; (at = s.find("(anonymous namespace)")) != std::string::npos;)
    s.replace(at, 21, "anon");
  size_t end = s.find_first_of("<(");
  if (end == std::string::npos) end = s.size();
  size_t begin = s.rfind("::", end);
  begin = begin == std::string::npos ? 0 : begin + 2;
  if (size_t space = s.rfind(' ', end); space != std::string::npos && space + 1 > begin)
    begin = space + 1;
  return s.substr(begin, end - begin);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    g_kernels->push_back({short_name(k->name),
                          k->start,
                          k->end,
                          {k->gridX, k->gridY, k->gridZ},
                          k->blockX,
                          k->graphId != 0});
  }
  std::free(buffer);
}

void write_trace() {
  cuptiActivityFlushAll(1);
  const char* path = std::getenv("CAIRN_KERNEL_TRACE");
  FILE* f = std::fopen(path && *path ? path : "kernel_trace.csv", "w");
  if (f == nullptr) {
    std::perror("kernel_trace");
    return;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(f, "name,start_ns,end_ns,grid_x,grid_y,grid_z,block_x,graph\n");
  for (const Kernel& k : *g_kernels)
    std::fprintf(f, "%s,%llu,%llu,%d,%d,%d,%d,%d\n", k.name.c_str(),
                 static_cast<unsigned long long>(k.start), static_cast<unsigned long long>(k.end),
                 k.grid[0], k.grid[1], k.grid[2], k.block_x, k.graph ? 1 : 0);
  std::fclose(f);
  std::fprintf(stderr, "kernel_trace: %zu kernels written\n", g_kernels->size());
}

}  // namespace

// Called by the CUDA driver when it loads this library (CUDA_INJECTION64_PATH); 1 on success.
extern "C" int InitializeInjection() {
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "kernel_trace: CUPTI activity tracing could not be enabled\n");
    return 0;
  }
  std::atexit(write_trace);
  return 1;
}
