// The checkpoint store on a real directory: the newest checkpoint of a key
// wins and older ones go, removal is durable and survives a restart, and a file
// that fails any check (bits flipped, cut, another version or model, a stray
// temporary file) is a miss, logged and removed — at start or at find.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "checkpoint_test_util.h"
#include "core/error.h"
#include "prefix/checkpoint_store.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> checkpoint_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& de : fs::directory_iterator(dir))
    if (de.path().extension() == ".ckpt") out.push_back(de.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct StoreFixture {
  test::TempDir tmp;
  TierNamespace ns = test::checkpoint_ns();
  std::mt19937 rng{11};
  PageKey key{0x1234, 0x5678};
};

TEST(CheckpointStore, NewestWinsAndOlderOnesGo) {
  StoreFixture f;
  CheckpointStore store(f.tmp.path(), f.ns);
  EXPECT_FALSE(store.find(f.key).checkpoint);
  const Checkpoint a = test::make_checkpoint(f.rng, f.key, 30, 4);
  Checkpoint b = a;  // the same generation, 4 tokens later
  for (int i = 0; i < 4; ++i) b.tokens.push_back(static_cast<int32_t>(f.rng() % 512));
  b.logprobs.resize(8), b.top.resize(8);
  ASSERT_TRUE(store.write(a).ok());
  ASSERT_TRUE(store.write(b).ok());
  const CheckpointRead got = store.find(f.key);
  ASSERT_TRUE(got.checkpoint) << got.detail;
  EXPECT_EQ(got.checkpoint->step(), 8);
  test::expect_same(b, *got.checkpoint);
  EXPECT_EQ(checkpoint_files(store.dir()),
            std::vector<std::string>{page_key_hex(f.key) + ".0000000000000008.ckpt"});
  EXPECT_EQ(store.stats().files, 1);
  EXPECT_EQ(store.stats().writes, 2);
  EXPECT_EQ(store.stats().removed, 1);
  EXPECT_FALSE(fs::exists(store.path_of(f.key, 4)));
}

TEST(CheckpointStore, SurvivesARestartAndKeysStayApart) {
  StoreFixture f;
  const PageKey other{9, 9};
  const Checkpoint a = test::make_checkpoint(f.rng, f.key, 30, 4);
  const Checkpoint b = test::make_checkpoint(f.rng, other, 10, 2);
  {
    CheckpointStore store(f.tmp.path(), f.ns);
    ASSERT_TRUE(store.write(a).ok());
    ASSERT_TRUE(store.write(b).ok());
  }
  CheckpointStore store(f.tmp.path(), f.ns);
  EXPECT_EQ(store.stats().files, 2);
  EXPECT_TRUE(store.contains(f.key));
  const CheckpointRead ga = store.find(f.key), gb = store.find(other);
  ASSERT_TRUE(ga.checkpoint && gb.checkpoint);
  test::expect_same(a, *ga.checkpoint);
  test::expect_same(b, *gb.checkpoint);
}

TEST(CheckpointStore, RemovalIsDurableAndFinal) {
  StoreFixture f;
  {
    CheckpointStore store(f.tmp.path(), f.ns);
    ASSERT_TRUE(store.write(test::make_checkpoint(f.rng, f.key, 30, 4)).ok());
    ASSERT_TRUE(store.remove(f.key).ok());
    EXPECT_FALSE(store.contains(f.key));
    EXPECT_FALSE(store.find(f.key).checkpoint);
    EXPECT_TRUE(checkpoint_files(store.dir()).empty());
    EXPECT_TRUE(store.remove(f.key).ok());  // nothing left: still fine
  }
  CheckpointStore store(f.tmp.path(), f.ns);  // a restart finds nothing to resume
  EXPECT_FALSE(store.find(f.key).checkpoint);
  EXPECT_EQ(store.stats().files, 0);
}

TEST(CheckpointStore, OneProcessPerDirectory) {
  StoreFixture f;
  CheckpointStore store(f.tmp.path(), f.ns);
  EXPECT_THROW(CheckpointStore(f.tmp.path(), f.ns), Error);
  CheckpointStore other_model(f.tmp.path(), test::checkpoint_ns("model-b"));  // its own dir
  EXPECT_NE(other_model.dir(), store.dir());
}

// Writes one checkpoint, closes the store, applies `damage` to the file, and
// checks the next store (at scan, then at find) treats it as a miss.
void expect_miss_after(const std::function<void(const std::string& path)>& damage,
                       PageFileError want) {
  StoreFixture f;
  std::string path;
  {
    CheckpointStore store(f.tmp.path(), f.ns);
    ASSERT_TRUE(store.write(test::make_checkpoint(f.rng, f.key, 40, 6)).ok());
    path = store.path_of(f.key, 6);
  }
  damage(path);
  CheckpointStore store(f.tmp.path(), f.ns);
  const CheckpointRead r = store.find(f.key);
  EXPECT_FALSE(r.checkpoint);
  EXPECT_EQ(store.stats().corrupt, 1);
  ASSERT_FALSE(store.issues().empty());
  EXPECT_EQ(store.issues().back().error, want) << store.issues().back().detail;
  EXPECT_EQ(store.issues().back().action, "removed");
  EXPECT_FALSE(fs::exists(path));
}

TEST(CheckpointStore, CorruptFilesAreMissesAtStart) {
  expect_miss_after([](const std::string& p) { test::flip_byte(p, 200); },
                    PageFileError::kPayloadChecksum);
  expect_miss_after([](const std::string& p) { test::flip_byte(p, 70); },
                    PageFileError::kHeaderChecksum);
  expect_miss_after([](const std::string& p) { fs::resize_file(p, fs::file_size(p) - 9); },
                    PageFileError::kTruncated);
  expect_miss_after([](const std::string& p) { fs::resize_file(p, 100); },
                    PageFileError::kTruncated);
  expect_miss_after(
      [](const std::string& p) {
        std::vector<uint8_t> b = test::read_all(p);
        const uint32_t v = 7;
        std::memcpy(b.data() + 8, &v, 4);
        test::write_all(p, b);
      },
      PageFileError::kBadVersion);
  expect_miss_after(
      [](const std::string& p) {  // another model's checkpoint under this name
        std::mt19937 rng(5);
        Checkpoint c = test::make_checkpoint(rng, PageKey{0x1234, 0x5678}, 40, 6);
        std::vector<uint8_t> b;
        encode_checkpoint_file(c, test::checkpoint_ns("model-b"), b);
        test::write_all(p, b);
      },
      PageFileError::kWrongNamespace);
}

TEST(CheckpointStore, ACorruptFileFoundAtFindIsRemoved) {
  StoreFixture f;
  CheckpointStore store(f.tmp.path(), f.ns);
  ASSERT_TRUE(store.write(test::make_checkpoint(f.rng, f.key, 40, 6)).ok());
  test::flip_byte(store.path_of(f.key, 6), 300);  // after the scan
  const CheckpointRead r = store.find(f.key);
  EXPECT_FALSE(r.checkpoint);
  EXPECT_EQ(r.error, PageFileError::kPayloadChecksum);
  EXPECT_FALSE(store.contains(f.key));
  EXPECT_FALSE(fs::exists(store.path_of(f.key, 6)));
  EXPECT_EQ(store.stats().corrupt, 1);
}

TEST(CheckpointStore, StrayTemporaryFilesAndForeignNamesAreNeverServed) {
  StoreFixture f;
  std::string dir;
  {
    CheckpointStore store(f.tmp.path(), f.ns);
    dir = store.dir();
  }
  // A write a crash cut short: a whole-looking file still in tmp/.
  std::vector<uint8_t> bytes;
  encode_checkpoint_file(test::make_checkpoint(f.rng, f.key, 20, 3), f.ns, bytes);
  test::write_all(dir + "/tmp/123.0.abc.tmp", bytes);
  test::write_all(dir + "/notes.txt", {1, 2, 3});  // not a checkpoint's name: left alone
  CheckpointStore store(f.tmp.path(), f.ns);
  EXPECT_EQ(store.stats().stray_temps, 1);
  EXPECT_TRUE(fs::is_empty(dir + "/tmp"));
  EXPECT_FALSE(store.find(f.key).checkpoint);
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
}

TEST(CheckpointStore, ANameThatLiesAboutItsStepIsRefused) {
  StoreFixture f;
  std::string dir;
  {
    CheckpointStore store(f.tmp.path(), f.ns);
    ASSERT_TRUE(store.write(test::make_checkpoint(f.rng, f.key, 20, 3)).ok());
    fs::rename(store.path_of(f.key, 3), store.path_of(f.key, 9));
  }
  CheckpointStore store(f.tmp.path(), f.ns);
  EXPECT_FALSE(store.find(f.key).checkpoint);
  EXPECT_EQ(store.stats().corrupt, 1);
}

}  // namespace
}  // namespace cairn
