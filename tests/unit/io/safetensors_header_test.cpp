// The safetensors header parser on files each test writes: what it accepts and
// how it names the file and tensor when something is wrong.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "io/safetensors.h"
#include "temp_dir.h"

namespace cairn::io {
namespace {

using test::expect_error;
using test::safetensors_bytes;

std::vector<SafetensorsEntry> parse(const std::string& bytes) {
  return parse_safetensors_header(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                  "x.safetensors");
}

TEST(SafetensorsHeader, ParsesEntriesAndOffsets) {
  std::string h =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]}})";
  auto e = parse(safetensors_bytes(h, std::string(32, '\1'), /*pad=*/false));
  ASSERT_EQ(e.size(), 2u);
  const SafetensorsEntry& a = e[0].name == "a" ? e[0] : e[1];
  const SafetensorsEntry& b = e[0].name == "a" ? e[1] : e[0];
  EXPECT_EQ(a.dtype, DType::kF32);
  EXPECT_TRUE(a.shape == Shape({2, 3}));
  EXPECT_EQ(a.offset_bytes, 8 + h.size());
  EXPECT_EQ(a.size_bytes, 24u);
  EXPECT_EQ(b.dtype, DType::kBF16);
  EXPECT_EQ(b.offset_bytes, 8 + h.size() + 24);
}

TEST(SafetensorsHeader, ScalarAndEmptyTensors) {
  std::string h = R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                  R"("z":{"dtype":"F16","shape":[0,5],"data_offsets":[4,4]}})";
  EXPECT_EQ(parse(safetensors_bytes(h, std::string(4, '\0'))).size(), 2u);
}

TEST(SafetensorsHeader, UnsupportedButKnownDtypeParses) {
  std::string h = R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})";
  auto e = parse(safetensors_bytes(h, std::string(16, '\0')));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_FALSE(e[0].has_dtype);
}

TEST(SafetensorsHeader, TooShortForHeaderLength) {
  expect_error([] { parse("abc"); }, {"x.safetensors", "truncated"});
}

TEST(SafetensorsHeader, HeaderLengthPastEndOfFile) {
  std::string bytes = safetensors_bytes(R"({})", "");
  bytes[0] = 100;  // claims 100 bytes of header
  expect_error([&] { parse(bytes); }, {"x.safetensors", "header of 100 bytes"});
}

TEST(SafetensorsHeader, HugeHeaderLengthDoesNotOverflow) {
  std::string bytes(16, '\xff');
  expect_error([&] { parse(bytes); }, {"x.safetensors", "truncated or corrupt"});
}

TEST(SafetensorsHeader, InvalidJson) {
  expect_error([] { parse(safetensors_bytes(R"({"a":{"dtype")", "")); },
               {"x.safetensors", "corrupt header"});
  expect_error([] { parse(safetensors_bytes(R"([1,2])", "")); }, {"corrupt header"});
}

TEST(SafetensorsHeader, UnknownDtypeNamesTensor) {
  std::string h = R"({"w":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})";
  expect_error([&] { parse(safetensors_bytes(h, std::string(4, '\0'))); },
               {"x.safetensors", "tensor 'w'", "unknown dtype 'F33'"});
}

TEST(SafetensorsHeader, ShapeTimesDtypeMustEqualByteLength) {
  std::string h = R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
  expect_error([&] { parse(safetensors_bytes(h, std::string(8, '\0'))); },
               {"x.safetensors", "tensor 'w'", "needs 12 bytes", "offsets give 8"});
}

TEST(SafetensorsHeader, OffsetsOutsideDataNameTensor) {
  std::string h = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  expect_error([&] { parse(safetensors_bytes(h, std::string(12, '\0'))); },
               {"x.safetensors", "tensor 'w'", "outside"});
  std::string rev = R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})";
  expect_error([&] { parse(safetensors_bytes(rev, std::string(12, '\0'))); }, {"tensor 'w'"});
}

TEST(SafetensorsHeader, BadShapeValues) {
  for (const char* shape : {"[-1]", "[1.5]", "[\"2\"]", "[1,2,3,4,5,6]", "3"}) {
    std::string h =
        std::string(R"({"w":{"dtype":"U8","shape":)") + shape + R"(,"data_offsets":[0,1]}})";
    expect_error([&] { parse(safetensors_bytes(h, std::string(1, '\0'))); }, {"tensor 'w'"});
  }
}

TEST(SafetensorsHeader, ShapeProductOverflowIsCaught) {
  std::string h =
      R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,4]}})";
  expect_error([&] { parse(safetensors_bytes(h, std::string(4, '\0'))); }, {"tensor 'w'"});
}

TEST(SafetensorsHeader, MissingFieldsNameTensor) {
  expect_error([] { parse(safetensors_bytes(R"({"w":{"shape":[1],"data_offsets":[0,1]}})", "x")); },
               {"tensor 'w'", "dtype"});
  expect_error(
      [] { parse(safetensors_bytes(R"({"w":{"dtype":"U8","data_offsets":[0,1]}})", "x")); },
      {"tensor 'w'", "shape"});
  expect_error([] { parse(safetensors_bytes(R"({"w":{"dtype":"U8","shape":[1]}})", "x")); },
               {"tensor 'w'", "data_offsets"});
  expect_error([] { parse(safetensors_bytes(R"({"w":5})", "x")); }, {"tensor 'w'"});
}

}  // namespace
}  // namespace cairn::io
