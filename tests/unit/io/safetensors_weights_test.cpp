// SafetensorsFile and WeightStore on folders each test writes: mapped views in
// the stored dtype, sharding through the index, and errors naming file and tensor.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "io/safetensors.h"
#include "io/weight_store.h"
#include "temp_dir.h"

namespace cairn::io {
namespace {

using test::expect_error;
using test::safetensors_bytes;
using test::TempDir;
using test::write_bytes;

std::string floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.begin(), s.size());
  return s;
}

// A file with "w" f32 [2, 2] = 1..4 and "b" bf16 [2] = (1.0, -2.0).
std::string two_tensor_file() {
  std::string h = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
                  R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[16,20]}})";
  std::string bf = {'\x80', '\x3f', '\x00', '\xc0'};  // 0x3f80 = 1.0, 0xc000 = -2.0
  return safetensors_bytes(h, floats({1, 2, 3, 4}) + bf);
}

TEST(SafetensorsFile, ViewsKeepStoredDtype) {
  TempDir dir;
  write_bytes(dir.file("m.safetensors"), two_tensor_file());
  auto f = SafetensorsFile::open(dir.file("m.safetensors"));
  Tensor w = f->tensor(*f->find("w"));
  EXPECT_EQ(w.dtype(), DType::kF32);
  EXPECT_EQ(w.data<float>()[3], 4.0f);
  Tensor b = f->tensor(*f->find("b"));
  EXPECT_EQ(b.dtype(), DType::kBF16);
  EXPECT_EQ(bf16_to_f32(b.data<uint16_t>()[1]), -2.0f);
  EXPECT_EQ(f->find("nope"), nullptr);
}

TEST(SafetensorsFile, MisalignedTensorIsAnError) {
  TempDir dir;
  std::string h = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";  // 57 bytes
  write_bytes(dir.file("m.safetensors"), safetensors_bytes(h, floats({1}), /*pad=*/false));
  auto f = SafetensorsFile::open(dir.file("m.safetensors"));
  expect_error([&] { f->tensor(*f->find("w")); }, {"m.safetensors", "tensor 'w'", "not aligned"});
}

TEST(SafetensorsFile, MissingFileIsBadFile) {
  TempDir dir;
  try {
    SafetensorsFile::open(dir.file("absent.safetensors"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kBadFile);
    EXPECT_NE(std::string(e.what()).find("absent.safetensors"), std::string::npos);
  }
}

TEST(SafetensorsFile, TruncatedDataNamesFileAndTensor) {
  TempDir dir;
  std::string bytes = two_tensor_file();
  write_bytes(dir.file("m.safetensors"), bytes.substr(0, bytes.size() - 3));
  expect_error([&] { SafetensorsFile::open(dir.file("m.safetensors")); },
               {"m.safetensors", "tensor 'b'"});
}

TEST(WeightStore, GetChecksShapeAndDtype) {
  TempDir dir;
  write_bytes(dir.file("a.safetensors"), two_tensor_file());
  std::string i32 = R"({"ids":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})";
  write_bytes(dir.file("b.safetensors"), safetensors_bytes(i32, std::string(4, '\0')));
  WeightStore ws = WeightStore::open_folder(dir.str());  // no index: every *.safetensors
  EXPECT_EQ(ws.get("w", {2, 2}).data<float>()[0], 1.0f);
  expect_error([&] { ws.get("w", {4}); },
               {"a.safetensors", "tensor 'w'", "shape [2, 2]", "expected [4]"});
  expect_error([&] { ws.get("ids", {1}); }, {"b.safetensors", "tensor 'ids'", "dtype I32"});
  expect_error([&] { ws.get("missing.weight", {1}); }, {"tensor 'missing.weight' is missing"});
}

TEST(WeightStore, FollowsTheShardIndex) {
  TempDir dir;
  write_bytes(dir.file("a.safetensors"), two_tensor_file());
  std::string h = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  write_bytes(dir.file("b.safetensors"), safetensors_bytes(h, floats({7})));
  write_bytes(dir.file("stray.safetensors"), "garbage that is never opened");
  write_bytes(dir.file("model.safetensors.index.json"),
              R"({"weight_map":{"w":"a.safetensors","b":"a.safetensors","x":"b.safetensors"}})");
  WeightStore ws = WeightStore::open_folder(dir.str());
  EXPECT_EQ(ws.get("x", {1}).data<float>()[0], 7.0f);
  EXPECT_EQ(ws.entries().size(), 3u);
  EXPECT_NE(ws.file_of("x").find("b.safetensors"), std::string::npos);
}

TEST(WeightStore, ModelSafetensorsAloneWhenPresent) {
  TempDir dir;
  write_bytes(dir.file("model.safetensors"), two_tensor_file());
  write_bytes(dir.file("reference.safetensors"), "not weights, never opened");
  WeightStore ws = WeightStore::open_folder(dir.str());
  EXPECT_EQ(ws.entries().size(), 2u);
}

TEST(WeightStore, IndexNamingAMissingShard) {
  TempDir dir;
  write_bytes(dir.file("model.safetensors.index.json"),
              R"({"weight_map":{"w":"gone.safetensors"}})");
  expect_error([&] { WeightStore::open_folder(dir.str()); }, {"gone.safetensors", "missing"});
}

TEST(WeightStore, CorruptIndex) {
  TempDir dir;
  write_bytes(dir.file("model.safetensors.index.json"), R"({"weight_map": [1]})");
  expect_error([&] { WeightStore::open_folder(dir.str()); },
               {"model.safetensors.index.json", "weight_map"});
  write_bytes(dir.file("model.safetensors.index.json"), "{not json");
  expect_error([&] { WeightStore::open_folder(dir.str()); }, {"not valid JSON"});
}

TEST(WeightStore, FolderWithoutWeights) {
  TempDir dir;
  expect_error([&] { WeightStore::open_folder(dir.str()); }, {"no *.safetensors"});
}

TEST(WeightStore, ReportsProgressUpToTotal) {
  TempDir dir;
  write_bytes(dir.file("model.safetensors"), two_tensor_file());
  WeightStore ws = WeightStore::open_folder(dir.str());
  size_t last = 0, total = 0;
  ws.set_progress([&](size_t done, size_t all) { last = done, total = all; }, true);
  ws.get("w", {2, 2});
  EXPECT_EQ(last, 16u);
  EXPECT_EQ(total, ws.total_bytes());
}

}  // namespace
}  // namespace cairn::io
