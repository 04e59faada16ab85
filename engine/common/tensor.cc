#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_join.h"
#include "onyx/tensor.h"

namespace onyx {

int64_t NumElements(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string DimsToString(absl::Span<const int64_t> dims) { return "[" + absl::StrJoin(dims, ",") + "]"; }

Tensor Tensor::Allocate(DataType type, absl::Span<const int64_t> dims) {
  Tensor t;
  t.type_ = type;
  t.dims_.assign(dims.begin(), dims.end());
  t.num_elements_ = NumElements(dims);
  const int64_t n = t.num_elements_;
  if (type == DataType::kString) {
    auto* strings = new std::string[n > 0 ? n : 1];
    t.owner_ = std::shared_ptr<void>(strings, [](void* p) { delete[] static_cast<std::string*>(p); });
    t.data_ = strings;
    return t;
  }
  size_t bytes = static_cast<size_t>(n) * ElementSize(type);
  size_t rounded = ((bytes + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, rounded > 0 ? rounded : 64);
  if (rounded > 0) std::memset(p, 0, rounded);
  t.owner_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  t.data_ = p;
  return t;
}

Tensor Tensor::Wrap(DataType type, absl::Span<const int64_t> dims, void* data) {
  Tensor t;
  t.type_ = type;
  t.dims_.assign(dims.begin(), dims.end());
  t.num_elements_ = NumElements(dims);
  t.data_ = data;
  return t;
}

Tensor Tensor::FromBuffer(DataType type, absl::Span<const int64_t> dims, void* data, std::shared_ptr<void> owner) {
  Tensor t = Wrap(type, dims, data);
  t.owner_ = std::move(owner);
  return t;
}

Tensor Tensor::Reshaped(absl::Span<const int64_t> dims) const {
  Tensor t = *this;
  t.dims_.assign(dims.begin(), dims.end());
  t.num_elements_ = NumElements(dims);
  return t;
}

Tensor Tensor::Clone() const {
  Tensor t = Allocate(type_, dims_);
  if (type_ == DataType::kString) {
    for (int64_t i = 0; i < num_elements_; ++i) t.mutable_data<std::string>()[i] = data<std::string>()[i];
  } else if (byte_size() > 0) {
    std::memcpy(t.data_, data_, byte_size());
  }
  return t;
}

Value Value::Sequence(DataType element_type, std::vector<Tensor> elements) {
  Value v;
  v.kind_ = Kind::kSequence;
  v.sequence_type_ = element_type;
  v.sequence_ = std::move(elements);
  return v;
}

}  // namespace onyx
