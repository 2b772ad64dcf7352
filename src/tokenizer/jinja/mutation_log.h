// The containers one render stored values into after making them: a namespace's attribute
// (`{% set ns.x = … %}`) and a list's append. Such a store can make a container hold itself
// (`{% set ns.me = ns %}`, `{% do l.append(l) %}`): a cycle of shared pointers that outlives
// the render and leaks. The log empties every such container when the render ends — a
// render's output is text, so none of its values is used after it. One log open a thread at a
// time (an inner one hides the outer until it closes); a store with no log open is not noted.
#pragma once

#include <unordered_set>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace cairn::jinja {

class MutationLog {
 public:
  MutationLog();
  ~MutationLog();
  MutationLog(const MutationLog&) = delete;
  MutationLog& operator=(const MutationLog&) = delete;

  // Records a list, dict or namespace a value was just stored into (once each).
  static void note(const Value& container);

 private:
  std::vector<Value> containers_;
  std::unordered_set<const void*> seen_;
  MutationLog* outer_;
};

}  // namespace cairn::jinja
