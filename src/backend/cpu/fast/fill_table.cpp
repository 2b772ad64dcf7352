#include "backend/cpu/fast/fast.h"

namespace cairn::ops::fast {

void fill_table(OpTable& t) {
  t.matmul = matmul;
}

}  // namespace cairn::ops::fast
