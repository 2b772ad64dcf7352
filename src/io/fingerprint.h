// A model's fingerprint: a hex digest naming its weights, config and tokenizer,
// so that cached KV pages (RAM and SSD tiers) are never shared between two
// models. It must be cheap at every start, so large files are sampled.
#pragma once

#include <string>

namespace cairn::io {

// path: a model folder or a single model file. Covers every regular file of
// the folder (or the file) except docs and images (*.md, *.png, *.txt): its
// name, size and content — whole when ≤ 64 MiB, else its first and last MiB
// and 64 blocks of 64 KiB spread evenly. Error(kIo) when a file cannot be read.
std::string model_fingerprint(const std::string& path);

}  // namespace cairn::io
