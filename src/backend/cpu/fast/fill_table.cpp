#include "backend/cpu/fast/fast.h"

namespace cairn::ops::fast {

void fill_table(OpTable& t) {
  (void)t;
}

}  // namespace cairn::ops::fast
