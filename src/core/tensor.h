// Tensor: a typed, strided view over shared Storage. Row-major; strides are in
// elements (quantized dtypes must be contiguous along the last dimension, whose
// length is a multiple of the group size). Copying a Tensor copies the view, not
// the data; storage lives as long as any view of it.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "core/storage.h"

namespace cairn {

constexpr int kMaxDims = 5;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  int ndim() const { return ndim_; }
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i)]; }
  int64_t numel() const;
  bool operator==(const Shape& other) const;
  std::string to_string() const;  // "[2, 3, 4]"
  void push_back(int64_t d);

 private:
  std::array<int64_t, kMaxDims> dims_{};
  int ndim_ = 0;
};

class Tensor;

// Affine quantization parts of a kQ8/kQ4 tensor: x = q * scale + bias, one
// scale and bias per group of `group_size` elements along the last dimension.
struct QuantParts {
  int group_size = 0;
  std::shared_ptr<const Tensor> scales;  // [..., last / group_size], f32/bf16/f16
  std::shared_ptr<const Tensor> biases;  // same shape and dtype as scales
};

class Tensor {
 public:
  Tensor() = default;

  // A new contiguous host tensor; contents uninitialized.
  static Tensor empty(const Shape& shape, DType dtype);
  static Tensor zeros(const Shape& shape, DType dtype);
  // A contiguous view of existing storage starting at offset_bytes.
  static Tensor view_of(std::shared_ptr<Storage> storage, size_t offset_bytes, const Shape& shape,
                        DType dtype);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return shape_.ndim(); }
  int64_t dim(int i) const { return shape_[i < 0 ? i + ndim() : i]; }
  int64_t stride(int i) const { return strides_[static_cast<size_t>(i < 0 ? i + ndim() : i)]; }
  int64_t numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  size_t nbytes() const { return dtype_bytes(dtype_, static_cast<size_t>(numel())); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  size_t offset_bytes() const { return offset_bytes_; }

  void* raw() const { return static_cast<uint8_t*>(storage_->data()) + offset_bytes_; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw());
  }

  // Views (no copy). reshape requires a contiguous tensor with the same numel.
  Tensor reshape(const Shape& shape) const;
  // Elements [start, end) along dim 0; keeps the other dims.
  Tensor slice_rows(int64_t start, int64_t end) const;
  // Row i along dim 0, with that dim dropped.
  Tensor row(int64_t i) const;

  const QuantParts* quant() const { return quant_.get(); }
  void set_quant(std::shared_ptr<const QuantParts> parts) { quant_ = std::move(parts); }

  // "f32[2, 3]" for messages.
  std::string describe() const;

 private:
  std::shared_ptr<Storage> storage_;
  size_t offset_bytes_ = 0;
  Shape shape_;
  std::array<int64_t, kMaxDims> strides_{};
  DType dtype_ = DType::kF32;
  std::shared_ptr<const QuantParts> quant_;

  void set_contiguous_strides();
};

}  // namespace cairn
