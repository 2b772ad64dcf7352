// One loader per family: maps its checkpoint layout and quirks onto
// DecoderWeights + DecoderOptions (folding what can be folded at load).
#pragma once

#include <memory>
#include <string>

#include "io/weight_store.h"
#include "model/config.h"
#include "model/model.h"

namespace cairn::families {

std::unique_ptr<Model> load_llama(const ModelConfig& c, io::WeightStore& ws);  // also Mistral
std::unique_ptr<Model> load_qwen2(const ModelConfig& c, io::WeightStore& ws);
std::unique_ptr<Model> load_qwen3(const ModelConfig& c, io::WeightStore& ws);
std::unique_ptr<Model> load_gemma2(const ModelConfig& c, io::WeightStore& ws);
std::unique_ptr<Model> load_gemma3_text(const ModelConfig& c, io::WeightStore& ws);
std::unique_ptr<Model> load_phi3(const ModelConfig& c, io::WeightStore& ws);

// A llama2.c checkpoint file as a llama-family model with interleaved rope.
std::unique_ptr<Model> load_llama2c(const std::string& path);
ModelConfig llama2c_config(const std::string& path);

}  // namespace cairn::families
