#include "core/tensor.h"

#include <cstring>

#include "core/error.h"

namespace cairn {

Shape::Shape(std::initializer_list<int64_t> dims) {
  CAIRN_CHECK(dims.size() <= kMaxDims, "at most {} dims", kMaxDims);
  for (int64_t d : dims) push_back(d);
}

void Shape::push_back(int64_t d) {
  CAIRN_CHECK(ndim_ < kMaxDims, "at most {} dims", kMaxDims);
  CAIRN_CHECK(d >= 0, "negative dim {}", d);
  dims_[static_cast<size_t>(ndim_++)] = d;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < ndim_; ++i) n *= dims_[static_cast<size_t>(i)];
  return n;
}

bool Shape::operator==(const Shape& other) const {
  if (ndim_ != other.ndim_) return false;
  for (int i = 0; i < ndim_; ++i)
    if ((*this)[i] != other[i]) return false;
  return true;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (int i = 0; i < ndim_; ++i) s += (i ? ", " : "") + std::to_string((*this)[i]);
  return s + "]";
}

void Tensor::set_contiguous_strides() {
  int64_t s = 1;
  for (int i = shape_.ndim() - 1; i >= 0; --i) {
    strides_[static_cast<size_t>(i)] = s;
    s *= shape_[i];
  }
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  return view_of(allocate_host(dtype_bytes(dtype, static_cast<size_t>(shape.numel()))), 0, shape,
                 dtype);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memset(t.raw(), 0, t.nbytes());
  return t;
}

Tensor Tensor::view_of(std::shared_ptr<Storage> storage, size_t offset_bytes, const Shape& shape,
                       DType dtype) {
  Tensor t;
  CAIRN_CHECK(offset_bytes + dtype_bytes(dtype, static_cast<size_t>(shape.numel())) <=
                  storage->size_bytes(),
              "view {} at {} past storage of {} bytes", shape.to_string(), offset_bytes,
              storage->size_bytes());
  t.storage_ = std::move(storage);
  t.offset_bytes_ = offset_bytes;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.set_contiguous_strides();
  return t;
}

bool Tensor::is_contiguous() const {
  int64_t s = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[static_cast<size_t>(i)] != s) return false;
    s *= shape_[i];
  }
  return true;
}

Tensor Tensor::reshape(const Shape& shape) const {
  CAIRN_CHECK(is_contiguous(), "reshape of a strided tensor {}", describe());
  CAIRN_CHECK(shape.numel() == numel(), "reshape {} to {}", describe(), shape.to_string());
  Tensor t = *this;
  t.shape_ = shape;
  t.set_contiguous_strides();
  return t;
}

Tensor Tensor::slice_rows(int64_t start, int64_t end) const {
  CAIRN_CHECK(ndim() >= 1 && 0 <= start && start <= end && end <= dim(0), "slice [{}, {}) of {}",
              start, end, describe());
  Tensor t = *this;
  t.offset_bytes_ += dtype_bytes(dtype_, static_cast<size_t>(start * strides_[0]));
  t.shape_[0] = end - start;
  return t;
}

Tensor Tensor::row(int64_t i) const {
  Tensor r = slice_rows(i, i + 1);
  Shape s;
  for (int d = 1; d < ndim(); ++d) s.push_back(shape_[d]);
  r.shape_ = s;
  for (int d = 1; d < ndim(); ++d)
    r.strides_[static_cast<size_t>(d - 1)] = strides_[static_cast<size_t>(d)];
  return r;
}

std::string Tensor::describe() const {
  return std::string(dtype_name(dtype_)) + shape_.to_string();
}

}  // namespace cairn
