#include "backend/cuda/graph_store.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/rank_context.h"
#include "core/error.h"

namespace cairn::cuda {
namespace {

// Captured uploads live in chunks of pinned memory mirrored in device memory, taken in
// order and kept until exit (a step's graphs hold a few KiB of arguments each).
constexpr size_t kChunkBytes = 1 << 20;
// What one capture may upload: its room is set aside before the capture starts,
// when allocating is still allowed.
constexpr size_t kCaptureBytes = 64 << 10;
constexpr size_t kAlign = 256;

struct Chunk {
  uint8_t* pinned = nullptr;
  uint8_t* device = nullptr;
  size_t used = kChunkBytes;  // none yet: the first capture allocates
};

struct CapturedUpload {
  const void* host;  // read again before every replay
  uint8_t* pinned;   // the graph's copy node reads this
  size_t bytes;
};

struct Graph {
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t done = nullptr;  // after its last launch: its pinned arguments are free to rewrite
  std::vector<CapturedUpload> uploads;
  uint8_t* pinned = nullptr;  // its capture's room, copied up whole before each launch
  uint8_t* device = nullptr;  // (unless the copies are nodes of the graph)
  size_t used = 0;
  bool prepared = false;  // prepare_graph_replays copied its room up for the next launch
};

// CAIRN_GRAPH_UPLOAD_NODES=1 (read once): captured uploads become copy nodes of the graph (root
// nodes the kernels that read them depend on) instead of one copy of the capture's room queued
// before each launch. A kernel that depends on a copy node starts 5-7 µs after the kernel ahead
// of it (kernel trace, batch 64-128), where one that depends on a kernel alone follows at once.
bool upload_nodes() {
  static const bool on = [] {
    const char* v = std::getenv("CAIRN_GRAPH_UPLOAD_NODES");
    return v != nullptr && v[0] == '1';
  }();
  return on;
}

struct OpenCapture {
  bool open = false;
  uint8_t* pinned = nullptr;  // this capture's room: kCaptureBytes here and in device memory
  uint8_t* device = nullptr;
  size_t used = 0;
  std::vector<CapturedUpload> uploads;
};

std::mutex store_mutex;
std::vector<Graph> graphs;  // by id; a released graph keeps its slot, empty
thread_local OpenCapture open_capture;

// Sets room aside for one capture in the current chunk, or a new chunk.
OpenCapture reserve_capture_room() {
  std::lock_guard<std::mutex> lock(store_mutex);
  Chunk& chunk = context_local<Chunk>();  // the context's (rank_context.h), on its device
  if (chunk.used + kCaptureBytes > kChunkBytes) {
    CAIRN_CUDA_CHECK(
        cudaHostAlloc(reinterpret_cast<void**>(&chunk.pinned), kChunkBytes, cudaHostAllocDefault));
    CAIRN_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&chunk.device), kChunkBytes));
    chunk.used = 0;
  }
  OpenCapture c{true, chunk.pinned + chunk.used, chunk.device + chunk.used, 0, {}};
  chunk.used += kCaptureBytes;
  return c;
}

// Returns the unused end of a capture's room to the chunk, when it is the room last set aside,
// so that graphs captured one after another hold rooms back to back (prepare_graph_replays then
// copies them up in one).
void give_back_room(const OpenCapture& c) {
  std::lock_guard<std::mutex> lock(store_mutex);
  Chunk& chunk = context_local<Chunk>();
  if (c.pinned + kCaptureBytes == chunk.pinned + chunk.used) chunk.used -= kCaptureBytes - c.used;
}

// Reads a graph's uploads again from their host addresses, once its last launch has read them.
void refresh(const Graph& g) {
  if (g.uploads.empty()) return;
  CAIRN_CUDA_CHECK(cudaEventSynchronize(g.done));
  for (const CapturedUpload& u : g.uploads) std::memcpy(u.pinned, u.host, u.bytes);
}

Graph& graph_at(int32_t id, const char* what) {
  if (id < 0 || static_cast<size_t>(id) >= graphs.size() || !graphs[static_cast<size_t>(id)].exec)
    fail(ErrorCode::kInvalidArgument, "{}: no graph {}", what, id);
  return graphs[static_cast<size_t>(id)];
}

}  // namespace

bool capturing_uploads() {
  return open_capture.open;
}

const void* capture_upload(const void* host, size_t bytes) {
  OpenCapture& c = open_capture;
  if (c.used + bytes > kCaptureBytes)
    fail(ErrorCode::kUnsupported,
         "graph capture: kernel arguments past {} KiB in one graph (this upload: {} bytes)",
         kCaptureBytes >> 10, bytes);
  uint8_t* pinned = c.pinned + c.used;
  uint8_t* device = c.device + c.used;
  c.used += (bytes + kAlign - 1) / kAlign * kAlign;
  std::memcpy(pinned, host, bytes);
  c.uploads.push_back({host, pinned, bytes});
  if (!upload_nodes()) return device;  // replay_graph copies the room up before the launch
  // A root node of the graph that the next launch also depends on, not a node between that
  // launch and the one before it, so that two kernels stay adjacent and may overlap (launch.h).
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  CAIRN_CUDA_CHECK(
      cudaStreamGetCaptureInfo(stream(), &status, nullptr, &graph, nullptr, nullptr, nullptr));
  cudaGraphNode_t copy = nullptr;
  CAIRN_CUDA_CHECK(cudaGraphAddMemcpyNode1D(&copy, graph, nullptr, 0, device, pinned, bytes,
                                            cudaMemcpyHostToDevice));
  CAIRN_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(stream(), &copy, nullptr, 1,
                                                       cudaStreamAddCaptureDependencies));
  return device;
}

void begin_graph_capture() {
  if (open_capture.open) fail(ErrorCode::kInvalidArgument, "graph capture: one is already open");
  OpenCapture c = reserve_capture_room();
  CAIRN_CUDA_CHECK(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
  open_capture = std::move(c);
}

int32_t end_graph_capture() {
  if (!open_capture.open) fail(ErrorCode::kInvalidArgument, "graph capture: none is open");
  OpenCapture c = std::move(open_capture);
  open_capture = OpenCapture{};
  cudaGraph_t g = nullptr;
  CAIRN_CUDA_CHECK(cudaStreamEndCapture(stream(), &g));
  Graph graph{nullptr,  nullptr,  std::move(c.uploads),
              c.pinned, c.device, upload_nodes() ? 0 : c.used};
  give_back_room(c);
  const cudaError_t made = cudaGraphInstantiate(&graph.exec, g, 0);
  cudaGraphDestroy(g);
  check(made, "cudaGraphInstantiate");
  CAIRN_CUDA_CHECK(cudaEventCreateWithFlags(&graph.done, cudaEventDisableTiming));
  std::lock_guard<std::mutex> lock(store_mutex);
  graphs.push_back(std::move(graph));
  return static_cast<int32_t>(graphs.size() - 1);
}

void replay_graph(int32_t id) {
  std::lock_guard<std::mutex> lock(store_mutex);
  Graph& g = graph_at(id, "replay");
  if (g.prepared) {
    g.prepared = false;
  } else {
    refresh(g);
    if (g.used > 0)  // after the stream's work before it: no kernel of an earlier launch reads it
      CAIRN_CUDA_CHECK(
          cudaMemcpyAsync(g.device, g.pinned, g.used, cudaMemcpyHostToDevice, stream()));
  }
  CAIRN_CUDA_CHECK(cudaGraphLaunch(g.exec, stream()));
  CAIRN_CUDA_CHECK(cudaEventRecord(g.done, stream()));
}

void prepare_graph_replays(std::span<const int32_t> ids) {
  std::lock_guard<std::mutex> lock(store_mutex);
  uint8_t *pinned = nullptr, *device = nullptr;  // the run of rooms not yet copied
  size_t bytes = 0;
  auto flush = [&] {
    if (bytes > 0)
      CAIRN_CUDA_CHECK(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, stream()));
    bytes = 0;
  };
  for (int32_t id : ids) {
    Graph& g = graph_at(id, "prepare");
    refresh(g);
    g.prepared = true;
    if (g.used == 0) continue;
    if (bytes == 0 || g.pinned != pinned + bytes || g.device != device + bytes) {
      flush();
      pinned = g.pinned, device = g.device;
    }
    bytes += g.used;
  }
  flush();
}

void release_graph(int32_t id) {
  std::lock_guard<std::mutex> lock(store_mutex);
  Graph& g = graph_at(id, "release");
  // Both are freed once the launches in flight have finished.
  CAIRN_CUDA_CHECK(cudaGraphExecDestroy(g.exec));
  CAIRN_CUDA_CHECK(cudaEventDestroy(g.done));
  g = Graph{};
}

}  // namespace cairn::cuda
