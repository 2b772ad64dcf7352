// Loading a model from a path: an HF folder (config.json + safetensors) or a
// llama2.c checkpoint (a .bin file, or a folder holding one beside its
// tokenizer .bin). The family comes from config.json's model_type.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/model.h"

namespace cairn {

struct LoadOptions {
  // Called as weights are fetched (and, with prefault, read into memory).
  std::function<void(size_t done_bytes, size_t total_bytes)> progress;
  bool prefault = true;  // touch every page of the weights during load
};

// Error(kBadFile) naming the file and tensor or field for bad input;
// Error(kUnsupported) listing the supported model types for an unknown one.
std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts);

// Reads a model's configuration and weight summary without building it (for `cairn inspect`).
ModelConfig inspect_model(const std::string& path);

// "gemma2", "gemma3_text", "llama", "mistral", "phi3", "qwen2", "qwen3".
std::vector<std::string> supported_model_types();

}  // namespace cairn
