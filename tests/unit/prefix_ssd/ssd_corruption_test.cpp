// Files that fail a check are misses with the right reason, set aside and
// logged; other namespaces' files are never touched.
#include <gtest/gtest.h>

#include <filesystem>

#include "prefix/ssd_tier.h"
#include "ssd_test_util.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using test::make_record;

constexpr int64_t kCap = int64_t{1} << 30;

std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& de : fs::recursive_directory_iterator(dir))
    if (de.is_regular_file()) out.push_back(de.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Writes records a, b, c through a tier that is then closed.
struct Fixture {
  test::TempDir tmp;
  TierNamespace ns = test::test_ns();
  std::vector<PageRecord> rs;
  std::string dir;
  Fixture() {
    std::mt19937 rng(21);
    SsdTier tier(tmp.path(), kCap, ns);
    for (int i = 0; i < 3; ++i) {
      rs.push_back(make_record(rng, ns, PageKey{}));
      EXPECT_TRUE(tier.write(rs.back()).ok());
    }
    dir = tier.dir();
  }
  std::string path(int i) const { return dir + "/" + page_key_hex(rs[i].key) + ".kvp"; }
};

TEST(SsdCorruption, ReadOfAChangedFileIsAMissAndQuarantinesIt) {
  Fixture f;
  SsdTier tier(f.tmp.path(), kCap, f.ns);
  test::flip_byte(f.path(0), kPageFileAlign + 100);  // payload
  test::flip_byte(f.path(1), 60);                    // header (page key field)
  fs::resize_file(f.path(2), fs::file_size(f.path(2)) - 10);
  const PageFileError want[3] = {PageFileError::kPayloadChecksum, PageFileError::kHeaderChecksum,
                                 PageFileError::kTruncated};
  for (int i = 0; i < 3; ++i) {
    const SsdRead got = tier.read(f.rs[i].key);
    EXPECT_FALSE(got.record);
    EXPECT_EQ(got.error, want[i]) << i << ": " << page_file_error_name(got.error) << " "
                                  << got.detail;
    EXPECT_FALSE(tier.contains(f.rs[i].key));
    EXPECT_FALSE(fs::exists(f.path(i)));
    EXPECT_TRUE(fs::exists(f.dir + "/quarantine/" + page_key_hex(f.rs[i].key) + ".kvp"));
  }
  const SsdTierStats st = tier.stats();
  EXPECT_EQ(st.corrupt, 3);
  EXPECT_EQ(st.misses, 3);
  EXPECT_EQ(st.hits, 0);
  EXPECT_EQ(st.files, 0);
  ASSERT_EQ(tier.issues().size(), 3u);
  EXPECT_EQ(tier.issues()[0].action, "quarantined");
  EXPECT_EQ(tier.read(f.rs[0].key).error, PageFileError::kMissing);  // never again
}

TEST(SsdCorruption, ScanSetsAsideFailingFilesAndRemovesStrayTemps) {
  Fixture f;
  test::flip_byte(f.path(0), 20);  // header: file_bytes field
  std::vector<uint8_t> bytes = test::read_all(f.path(1));
  bytes[8] = 9;  // format version 9 (the header checksum would fail too; version is checked first)
  test::write_all(f.path(1), bytes);
  test::write_all(f.dir + "/tmp/123.0.abc.tmp", {1, 2, 3});       // a write a crash interrupted
  SsdTier tier(f.tmp.path(), kCap, f.ns, SsdTierOptions{false});  // remove, not quarantine
  EXPECT_EQ(tier.stats().files, 1);
  EXPECT_TRUE(tier.contains(f.rs[2].key));
  EXPECT_EQ(tier.stats().stray_temps, 1);
  EXPECT_FALSE(fs::exists(f.dir + "/tmp/123.0.abc.tmp"));
  EXPECT_EQ(tier.stats().corrupt, 2);
  std::vector<PageFileError> errors;
  for (const SsdIssue& i : tier.issues()) {
    errors.push_back(i.error);
    EXPECT_EQ(i.action, "removed");
  }
  std::sort(errors.begin(), errors.end());
  EXPECT_EQ(errors, (std::vector<PageFileError>{PageFileError::kBadVersion,
                                                PageFileError::kHeaderChecksum}));
  EXPECT_FALSE(fs::exists(f.path(0)));
  EXPECT_FALSE(fs::exists(f.path(1)));
  EXPECT_TRUE(fs::is_empty(f.dir + "/quarantine"));
  ASSERT_TRUE(tier.read(f.rs[2].key).record);
}

TEST(SsdCorruption, QuarantineHoldsAtMostItsLimit) {
  Fixture f;
  for (int i = 0; i < 3; ++i) test::flip_byte(f.path(i), kPageFileAlign + 1);
  {
    SsdTier tier(f.tmp.path(), kCap, f.ns, SsdTierOptions{true, 2});
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(tier.read(f.rs[i].key).record);
    EXPECT_EQ(tier.stats().quarantined, 2);
    EXPECT_EQ(tier.issues()[2].action, "removed");
  }
  SsdTier again(f.tmp.path(), kCap, f.ns, SsdTierOptions{true, 2});
  EXPECT_EQ(again.stats().quarantined, 2);  // counted at start
  EXPECT_EQ(again.stats().files, 0);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(fs::exists(f.path(i)));
}

TEST(SsdCorruption, AFileUnderAnotherNameIsAWrongKey) {
  Fixture f;
  fs::rename(f.path(0), f.path(1));  // b's name now holds a's page
  SsdTier tier(f.tmp.path(), kCap, f.ns);
  EXPECT_FALSE(tier.contains(f.rs[1].key));
  EXPECT_FALSE(tier.contains(f.rs[0].key));
  ASSERT_EQ(tier.issues().size(), 1u);
  EXPECT_EQ(tier.issues()[0].error, PageFileError::kWrongKey);
}

TEST(SsdCorruption, OtherNamespacesAreNeverTouched) {
  Fixture f;  // model-a's files
  std::mt19937 rng(22);
  const TierNamespace other = test::test_ns("model-b");
  std::string other_dir;
  PageRecord foreign;
  {
    SsdTier b(f.tmp.path(), kCap, other);
    foreign = make_record(rng, other, PageKey{});
    ASSERT_TRUE(b.write(foreign).ok());
    other_dir = b.dir();
  }
  // A model-b file (a wrong fingerprint) sitting in model-a's directory.
  const std::string stray = f.dir + "/" + page_key_hex(foreign.key) + ".kvp";
  fs::copy_file(other_dir + "/" + page_key_hex(foreign.key) + ".kvp", stray);
  const std::vector<std::string> b_files = files_under(other_dir);
  {
    SsdTier a(f.tmp.path(), kCap, f.ns);
    EXPECT_EQ(a.stats().files, 3);
    EXPECT_FALSE(a.contains(foreign.key));
    ASSERT_EQ(a.issues().size(), 1u);
    EXPECT_EQ(a.issues()[0].error, PageFileError::kWrongNamespace);
    EXPECT_EQ(a.issues()[0].action, "skipped");
    EXPECT_TRUE(fs::exists(stray));
    // A file swapped for another model's after indexing: a miss, left in place.
    fs::copy_file(stray, f.path(0), fs::copy_options::overwrite_existing);
    const SsdRead got = a.read(f.rs[0].key);
    EXPECT_EQ(got.error, PageFileError::kWrongNamespace);
    EXPECT_TRUE(fs::exists(f.path(0)));
  }
  EXPECT_EQ(files_under(other_dir), b_files);
  SsdTier b(f.tmp.path(), kCap, other);
  ASSERT_TRUE(b.read(foreign.key).record);
}

}  // namespace
}  // namespace cairn
