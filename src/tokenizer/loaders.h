// The loaders behind load_tokenizer(): each builds a Pipeline from one format.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/parts.h"

namespace cairn::io {
class GgufFile;
}

namespace cairn::tok {

// llama2.c tokenizer.bin: int32 max_token_length, then per token float32 score,
// int32 length, bytes. Ids 0/1/2 are <unk>/BOS/EOS; "<0xXX>" pieces are bytes.
std::unique_ptr<Pipeline> load_llama2c(const std::string& path);

// The vocabulary of a GGUF file (tokenizer.ggml.*).
std::unique_ptr<Pipeline> load_gguf_vocab(const std::string& path);
// The same from a parsed file (GgufFile::parse of bytes in memory, for fuzzing).
std::unique_ptr<Pipeline> load_gguf_vocab(const io::GgufFile& file);

// tokenizer.json; `folder` (may be empty) holds tokenizer_config.json,
// special_tokens_map.json and generation_config.json.
std::unique_ptr<Pipeline> load_hf(const std::string& json_path, const std::string& folder);
// tokenizer.json text already in memory; `name` stands for the file in messages.
std::unique_ptr<Pipeline> load_hf_text(std::string_view json_text, const std::string& name);

}  // namespace cairn::tok
