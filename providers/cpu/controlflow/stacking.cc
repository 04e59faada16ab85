#include "providers/cpu/controlflow/stacking.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

void CopyElements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset, int64_t count) {
  if (src.type() == DataType::kString) {
    const std::string* s = src.data<std::string>() + src_offset;
    std::string* d = dst.mutable_data<std::string>() + dst_offset;
    for (int64_t i = 0; i < count; ++i) d[i] = s[i];
    return;
  }
  const size_t size = ElementSize(src.type());
  std::memcpy(static_cast<char*>(dst.mutable_raw()) + dst_offset * size,
              static_cast<const char*>(src.raw()) + src_offset * size, count * size);
}

}  // namespace

Tensor TakeAlongAxis(const Tensor& tensor, int64_t axis, int64_t index) {
  const Dims& dims = tensor.dims();
  Dims out_dims;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < tensor.rank(); ++i) {
    if (i < axis) outer *= dims[i];
    if (i > axis) inner *= dims[i];
    if (i != axis) out_dims.push_back(dims[i]);
  }
  Tensor out = Tensor::Allocate(tensor.type(), out_dims);
  const int64_t len = dims[axis];
  for (int64_t o = 0; o < outer; ++o) {
    CopyElements(tensor, (o * len + index) * inner, out, o * inner, inner);
  }
  return out;
}

absl::StatusOr<Tensor> StackAlongAxis(const std::vector<Tensor>& slices, int64_t axis, bool reverse,
                                      DataType empty_type, const Dims& empty_dims) {
  if (slices.empty()) {
    Dims dims = empty_dims;
    dims.insert(dims.begin() + std::min<int64_t>(axis, dims.size()), 0);
    return Tensor::Allocate(empty_type, dims);
  }
  const Tensor& first = slices[0];
  if (axis < 0 || axis > first.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("stack axis ", axis, " is out of range for slices of rank ",
                                                   first.rank()));
  }
  for (const Tensor& s : slices) {
    if (s.dims() != first.dims() || s.type() != first.type()) {
      return absl::InvalidArgumentError(absl::StrCat("iterations produced different shapes or types: ",
                                                     DimsToString(first.dims()), " vs ", DimsToString(s.dims())));
    }
  }
  const int64_t n = static_cast<int64_t>(slices.size());
  Dims dims = first.dims();
  dims.insert(dims.begin() + axis, n);
  Tensor out = Tensor::Allocate(first.type(), dims);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < first.rank(); ++i) (i < axis ? outer : inner) *= first.dims()[i];
  for (int64_t k = 0; k < n; ++k) {
    const Tensor& s = slices[reverse ? n - 1 - k : k];
    for (int64_t o = 0; o < outer; ++o) CopyElements(s, o * inner, out, (o * n + k) * inner, inner);
  }
  return out;
}

}  // namespace onyx
