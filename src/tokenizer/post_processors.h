// Post-processors: add special tokens around an encoded sequence
// (EncodeOptions::add_special_tokens).
#pragma once

#include <memory>
#include <vector>

#include "tokenizer/parts.h"

namespace cairn::tok {

// BOS and/or EOS around the sequence (GGUF add_bos_token / add_eos_token, llama2.c).
class BosEosPostProcessor final : public PostProcessor {
 public:
  BosEosPostProcessor(int32_t bos_id, int32_t eos_id) : bos_id_(bos_id), eos_id_(eos_id) {}
  void apply(std::vector<int32_t>& ids) const override;

 private:
  int32_t bos_id_, eos_id_;  // -1: not added
};

// HF TemplateProcessing, single-sequence template: ids of special tokens before
// and after "$A".
class TemplatePostProcessor final : public PostProcessor {
 public:
  TemplatePostProcessor(std::vector<int32_t> before, std::vector<int32_t> after)
      : before_(std::move(before)), after_(std::move(after)) {}
  void apply(std::vector<int32_t>& ids) const override;

 private:
  std::vector<int32_t> before_, after_;
};

class SequencePostProcessor final : public PostProcessor {
 public:
  explicit SequencePostProcessor(std::vector<std::unique_ptr<PostProcessor>> steps)
      : steps_(std::move(steps)) {}
  void apply(std::vector<int32_t>& ids) const override;

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

}  // namespace cairn::tok
