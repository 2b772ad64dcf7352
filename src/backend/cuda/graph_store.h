// CUDA graphs on the ops' stream (DeviceBackend's capture and replay). A graph's
// kernel arguments uploaded during its capture (upload(), cuda_runtime.h) land in
// pinned and device memory the graph keeps; before every replay they are copied
// again from the host addresses they were uploaded from, then up to the device in
// one copy queued ahead of the launch, so a graph reads the values those addresses
// hold at replay (a step's positions and token ids).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace cairn::cuda {

// Starts capturing stream() on this thread. Error(kInvalidArgument) if a capture is open.
void begin_graph_capture();
// Ends it and instantiates the graph; returns its id.
int32_t end_graph_capture();
// Refreshes the graph's uploads from their host addresses and copies them up (unless
// prepare_graph_replays did), then launches it on stream().
void replay_graph(int32_t id);
// Refreshes these graphs' uploads now and queues their copies on stream(), one copy for each
// run of graphs whose rooms lie back to back (graphs captured one after another), so that
// their next replays, in this order, copy nothing.
void prepare_graph_replays(std::span<const int32_t> ids);
// Destroys the graph once the work already issued has run (its id is not reused).
void release_graph(int32_t id);

// True while this thread has a capture open; upload() then calls capture_upload.
bool capturing_uploads();
// Copies `bytes` at `host` into memory the open capture's graph keeps and records
// a copy of it to the device in the graph; returns the device address.
const void* capture_upload(const void* host, size_t bytes);

}  // namespace cairn::cuda
