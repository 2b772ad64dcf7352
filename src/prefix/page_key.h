// Content keys of full KV pages (DESIGN.md decision 5). A page's key is
// hash(parent key, its token ids, namespace); the namespace folds in the model
// fingerprint and the KV scheme, so two models or two schemes never share a
// page. The same keys name a page in the RAM, host and SSD tiers.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "kv/page_meta.h"

namespace cairn {

// The namespace of a model fingerprint and a KV scheme name (and a tag that
// keeps, say, generation checkpoints apart from ordinary prefixes). Never empty.
PageKey namespace_key(std::string_view model_fingerprint, std::string_view kv_scheme,
                      std::string_view tag = "prefix");

// The key of the page holding `tokens` [page_tokens] after the chain ending at
// `parent` (empty for a sequence's first page), in namespace ns. XXH3-128 over
// (ns, parent, tokens as little-endian int32). Never empty.
PageKey page_key(const PageKey& ns, const PageKey& parent, std::span<const int32_t> tokens);

// A key naming arbitrary bytes (XXH3-128; never empty): generation
// checkpoints name a canonical request with it.
PageKey content_key(std::span<const uint8_t> bytes);

}  // namespace cairn
