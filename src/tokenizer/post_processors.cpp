#include "tokenizer/post_processors.h"

namespace cairn::tok {

void BosEosPostProcessor::apply(std::vector<int32_t>& ids) const {
  if (bos_id_ >= 0) ids.insert(ids.begin(), bos_id_);
  if (eos_id_ >= 0) ids.push_back(eos_id_);
}

void TemplatePostProcessor::apply(std::vector<int32_t>& ids) const {
  ids.insert(ids.begin(), before_.begin(), before_.end());
  ids.insert(ids.end(), after_.begin(), after_.end());
}

void SequencePostProcessor::apply(std::vector<int32_t>& ids) const {
  for (const auto& step : steps_) step->apply(ids);
}

}  // namespace cairn::tok
