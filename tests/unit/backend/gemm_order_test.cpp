// The fixed-order GEMM's order (backend/cuda/gemm_order.h), which every GPU tile and the
// cuBLASLt runs follow: where k is cut, and the order in which a tile walks its k-tiles.
#include "backend/cuda/gemm_order.h"

#include <gtest/gtest.h>

#include <vector>

namespace cairn {
namespace {

using cuda::k_split;
using cuda::TileOrder;

TEST(GemmOrder, SplitIsHalfOfKOnA256Boundary) {
  EXPECT_EQ(16, k_split(16));
  EXPECT_EQ(256, k_split(256));
  EXPECT_EQ(496, k_split(496));  // one part below 512
  EXPECT_EQ(256, k_split(512));
  EXPECT_EQ(256, k_split(1008));  // parts of 256 and 752
  EXPECT_EQ(2048, k_split(4096));
  EXPECT_EQ(7168, k_split(14336));
  EXPECT_EQ(512, k_split(1040));
  EXPECT_EQ(1024, k_split(2064));
  for (int64_t k = 512; k <= 40000; k += 16) {
    const int64_t first = k_split(k);
    ASSERT_EQ(0, first % 256) << k;
    ASSERT_GE(first, 256) << k;
    ASSERT_LE(first, k - first) << k;        // the second part is the longer
    ASSERT_LT(k - first, first + 512) << k;  // and about as long
  }
}

// The cut follows the setting's depth and the weight's rows alone: narrow products of that
// depth are cut, wide ones (gate|up, an LM head) never, shallower ones never, nothing when off.
TEST(GemmOrder, OnlyNarrowProductsOfTheDepthAreCut) {
  EXPECT_EQ(7168, cuda::cut_of(4096, 14336, 8192));  // an 8B model's down
  EXPECT_EQ(4096, cuda::cut_of(4096, 4096, 8192));   // its o
  EXPECT_EQ(4096, cuda::cut_of(10240, 8192, 8192));  // a 70B model's q|k|v
  EXPECT_EQ(8192, cuda::cut_of(57344, 8192, 8192));  // its gate|up: wide
  EXPECT_EQ(8192, cuda::cut_of(28672, 8192, 8192));  // its gate|up's half at two ranks
  EXPECT_EQ(4096, cuda::cut_of(14336, 8192, 8192));  // its quarter at four: narrow
  EXPECT_EQ(4096, cuda::cut_of(cuda::kWideRows - 1, 8192, 8192));
  EXPECT_EQ(8192, cuda::cut_of(cuda::kWideRows, 8192, 8192));
  EXPECT_EQ(14336, cuda::cut_of(4096, 14336, 0));      // off
  EXPECT_EQ(14336, cuda::cut_of(4096, 14336, 16384));  // shallower than the setting
}

// Every k-tile once; each part's tiles in increasing k; the parts alternate while both have
// tiles; no tile straddles the cut.
void check_order(int64_t k, int tile_k) {
  const TileOrder o = TileOrder::of(k, k_split(k), tile_k);
  ASSERT_EQ((k + tile_k - 1) / tile_k, o.end);
  if (k >= 512) {
    ASSERT_EQ(k_split(k), int64_t{o.mid} * tile_k) << "k " << k << " tile " << tile_k;
  } else {
    ASSERT_EQ(o.end, o.mid);
  }
  std::vector<int> seen(o.end, 0);
  int last[2] = {-1, -1};
  for (int j = 0; j < o.end; ++j) {
    const int t = o.tile(j), p = o.part(j);
    ASSERT_GE(t, 0);
    ASSERT_LT(t, o.end);
    ++seen[t];
    ASSERT_EQ(p, t < o.mid ? 0 : 1) << "k " << k << " tile " << tile_k << " position " << j;
    ASSERT_GT(t, last[p]) << "k " << k << " position " << j;
    last[p] = t;
    if (j < 2 * o.shared()) {
      ASSERT_EQ(j % 2, p) << "k " << k << " position " << j;
    }
  }
  for (int t = 0; t < o.end; ++t) ASSERT_EQ(1, seen[t]) << "k " << k << " tile " << t;
}

TEST(GemmOrder, TilesAlternateBetweenThePartsAndEachPartRunsInOrder) {
  for (int tile_k : {64, 128, 256})
    for (int64_t k = 16; k <= 20000; k += 16) check_order(k, tile_k);
}

TEST(GemmOrder, LlamaShapes) {
  const TileOrder down = TileOrder::of(14336, k_split(14336), 64);  // 112 tiles a part
  EXPECT_EQ(112, down.mid);
  EXPECT_EQ(224, down.end);
  EXPECT_EQ(0, down.tile(0));
  EXPECT_EQ(112, down.tile(1));
  EXPECT_EQ(1, down.tile(2));
  EXPECT_EQ(223, down.tile(223));
  const TileOrder short_tail =
      TileOrder::of(1040, k_split(1040), 256);  // 512 | 512 + a 16-value tile
  EXPECT_EQ(2, short_tail.mid);
  EXPECT_EQ(5, short_tail.end);
  const int want[] = {0, 2, 1, 3, 4};
  for (int j = 0; j < 5; ++j) EXPECT_EQ(want[j], short_tail.tile(j)) << j;
  const TileOrder one = TileOrder::of(496, k_split(496), 64);
  for (int j = 0; j < one.end; ++j) EXPECT_EQ(0, one.part(j));
  const TileOrder whole = TileOrder::of(4096, 4096, 64);  // the default: k not cut
  EXPECT_EQ(64, whole.mid);
  EXPECT_EQ(64, whole.end);
  for (int j = 0; j < whole.end; ++j) {
    EXPECT_EQ(j, whole.tile(j));
    EXPECT_EQ(0, whole.part(j));
  }
}

}  // namespace
}  // namespace cairn
