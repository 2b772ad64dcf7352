// A model and its tokenizer loaded for a CLI verb, with a progress bar.
#pragma once

#include <memory>
#include <string>

#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace cairn {

struct LoadedModel {
  std::string path;
  std::unique_ptr<Model> model;
  std::unique_ptr<tok::Tokenizer> tokenizer;
};

// path: --model's value ("" = the default model).
LoadedModel load_for_cli(const std::string& path);

// Sets the CPU thread count (0 = all cores).
void set_threads(int n_threads);

}  // namespace cairn
