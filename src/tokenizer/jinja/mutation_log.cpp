#include "tokenizer/jinja/mutation_log.h"

namespace cairn::jinja {
namespace {

thread_local MutationLog* open_log = nullptr;

}  // namespace

MutationLog::MutationLog() : outer_(open_log) {
  open_log = this;
}

MutationLog::~MutationLog() {
  open_log = outer_;
  // Emptied first, released after: a container a cleared one held stays alive until every
  // clear is done.
  for (const Value& c : containers_) {
    if (c.is_list())
      c.as_list().items.clear();
    else if (c.is_attribute_container())
      c.as_dict().entries.clear();
  }
}

void MutationLog::note(const Value& container) {
  MutationLog* log = open_log;
  if (log == nullptr || !log->seen_.insert(container.identity()).second) return;
  log->containers_.push_back(container);
}

}  // namespace cairn::jinja
