// GgufFile on files built here byte by byte (the layout written from the GGUF
// specification), and on the shared tiny-random Llama-2 GGUF.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "io/gguf.h"

namespace cairn::io {
namespace {

class Writer {
 public:
  template <typename T>
  Writer& pod(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
    return *this;
  }
  Writer& str(std::string_view s) {
    pod<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  Writer& key(std::string_view k, GgufType t) {
    return str(k).pod<uint32_t>(static_cast<uint32_t>(t));
  }
  std::vector<uint8_t> bytes;
};

// A version-3 file: 13 keys of every type, one f32 tensor [4, 2] and its data.
std::vector<uint8_t> sample_file(uint32_t alignment = 64) {
  Writer w;
  w.pod<uint32_t>(0x46554747).pod<uint32_t>(3).pod<uint64_t>(1).pod<uint64_t>(13);
  w.key("u8", GgufType::kUint8).pod<uint8_t>(200);
  w.key("i8", GgufType::kInt8).pod<int8_t>(-5);
  w.key("u16", GgufType::kUint16).pod<uint16_t>(60000);
  w.key("i16", GgufType::kInt16).pod<int16_t>(-300);
  w.key("u32", GgufType::kUint32).pod<uint32_t>(4000000000u);
  w.key("i32", GgufType::kInt32).pod<int32_t>(-7);
  w.key("f32", GgufType::kFloat32).pod<float>(1.5f);
  w.key("flag", GgufType::kBool).pod<uint8_t>(1);
  w.key("name", GgufType::kString).str("tiny");
  w.key("u64", GgufType::kUint64).pod<uint64_t>(1ull << 40);
  w.key("f64", GgufType::kFloat64).pod<double>(-2.25);
  w.key("words", GgufType::kArray).pod<uint32_t>(8).pod<uint64_t>(2).str("a b").str("c");
  w.key("general.alignment", GgufType::kUint32).pod<uint32_t>(alignment);
  w.str("weight").pod<uint32_t>(2).pod<uint64_t>(4).pod<uint64_t>(2).pod<uint32_t>(0).pod<uint64_t>(
      0);
  while (w.bytes.size() % alignment) w.bytes.push_back(0);
  for (int i = 0; i < 8; ++i) w.pod<float>(static_cast<float>(i));
  return w.bytes;
}

TEST(Gguf, ReadsEveryValueType) {
  const auto bytes = sample_file();
  auto f = GgufFile::parse(bytes, "sample.gguf");
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->keys().size(), 13u);
  EXPECT_EQ(f->get_int("u8"), 200);
  EXPECT_EQ(f->get_int("i8"), -5);
  EXPECT_EQ(f->get_int("u16"), 60000);
  EXPECT_EQ(f->get_int("i16"), -300);
  EXPECT_EQ(f->get_uint("u32"), 4000000000u);
  EXPECT_EQ(f->get_int("i32"), -7);
  EXPECT_EQ(f->get_float("f32"), 1.5);
  EXPECT_TRUE(f->get_bool("flag"));
  EXPECT_EQ(f->get_string("name"), "tiny");
  EXPECT_EQ(f->get_uint("u64"), 1ull << 40);
  EXPECT_EQ(f->get_float("f64"), -2.25);
  const GgufValue* words = f->find_array("words", GgufType::kString);
  ASSERT_NE(words, nullptr);
  ASSERT_EQ(words->strings.size(), 2u);
  EXPECT_EQ(words->strings[0], "a b");
  EXPECT_EQ(f->find("absent"), nullptr);
}

TEST(Gguf, TensorTableAndAlignment) {
  for (uint32_t alignment : {32u, 64u, 128u}) {
    const auto bytes = sample_file(alignment);
    auto f = GgufFile::parse(bytes, "sample.gguf");
    EXPECT_EQ(f->alignment(), alignment);
    EXPECT_EQ(f->data_offset() % alignment, 0u);
    ASSERT_EQ(f->tensors().size(), 1u);
    const GgufTensorInfo& t = f->tensors()[0];
    EXPECT_EQ(t.name, "weight");
    EXPECT_EQ(t.dims, (std::vector<uint64_t>{4, 2}));
    EXPECT_EQ(t.size_bytes, 32u);
    float x;
    std::memcpy(&x, bytes.data() + f->data_offset() + 5 * 4, 4);
    EXPECT_EQ(x, 5.0f);
  }
}

TEST(Gguf, WrongTypeNamesTheKey) {
  const auto bytes = sample_file();
  auto f = GgufFile::parse(bytes, "sample.gguf");
  try {
    f->get_string("u8");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'u8'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sample.gguf"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f->get_int("missing"), Error);
}

TEST(Gguf, EveryTruncationIsAnErrorNotACrash) {
  const auto bytes = sample_file();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(GgufFile::parse(cut, "cut.gguf"), Error) << "length " << n;
  }
}

TEST(Gguf, CorruptHeaders) {
  auto bytes = sample_file();
  bytes[0] = 'X';
  EXPECT_THROW(GgufFile::parse(bytes, "bad.gguf"), Error);
  bytes = sample_file();
  bytes[4] = 9;  // version 9
  EXPECT_THROW(GgufFile::parse(bytes, "bad.gguf"), Error);
  bytes = sample_file();
  bytes[16] = 0xFF;  // absurd key count
  EXPECT_THROW(GgufFile::parse(bytes, "bad.gguf"), Error);
}

TEST(Gguf, TinyRandomLlama2File) {
  const std::string path =
      std::string(CAIRN_SHARED_DIR) + "/models/tiny-random-gguf/llama-2-tiny-random.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  auto f = GgufFile::open(path);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(f->find_array("tokenizer.ggml.tokens", GgufType::kString)->n_elems, 32000u);
  EXPECT_FALSE(f->tensors().empty());
  uint64_t end = 0;
  for (const auto& t : f->tensors()) end = std::max(end, t.offset_bytes + t.size_bytes);
  EXPECT_LE(f->data_offset() + end, f->mapped()->size_bytes());
}

}  // namespace
}  // namespace cairn::io
