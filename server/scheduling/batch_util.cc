#include "server/scheduling/batch_util.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onyx::server {
namespace {

// Elements in one row (dims after the first).
int64_t RowElements(const onyx::Tensor& t) {
  return onyx::NumElements(absl::MakeConstSpan(t.dims()).subspan(1));
}

// Copies `rows` rows starting at row `src_row` of `src` to row `dst_row` of `dst`.
void CopyRows(const onyx::Tensor& src, int64_t src_row, onyx::Tensor& dst, int64_t dst_row,
              int64_t rows) {
  const int64_t row = RowElements(src);
  if (src.type() == onyx::DataType::kString) {
    const std::string* from = src.data<std::string>() + src_row * row;
    std::string* to = dst.mutable_data<std::string>() + dst_row * row;
    for (int64_t i = 0; i < rows * row; ++i) to[i] = from[i];
    return;
  }
  const size_t row_bytes = static_cast<size_t>(row) * onyx::ElementSize(src.type());
  if (rows * row == 0) return;
  std::memcpy(static_cast<char*>(dst.mutable_raw()) + dst_row * row_bytes,
              static_cast<const char*>(src.raw()) + src_row * row_bytes, rows * row_bytes);
}

template <typename T>
void FillAll(onyx::Tensor& t, T value) {
  T* p = t.mutable_data<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = value;
}

// Every element of `t` set to `value` in t's type.
void Fill(onyx::Tensor& t, double value) {
  switch (t.type()) {
    case onyx::DataType::kFloat: return FillAll(t, static_cast<float>(value));
    case onyx::DataType::kDouble: return FillAll(t, value);
    case onyx::DataType::kUint8: return FillAll(t, static_cast<uint8_t>(value));
    case onyx::DataType::kInt8: return FillAll(t, static_cast<int8_t>(value));
    case onyx::DataType::kUint16: return FillAll(t, static_cast<uint16_t>(value));
    case onyx::DataType::kInt16: return FillAll(t, static_cast<int16_t>(value));
    case onyx::DataType::kUint32: return FillAll(t, static_cast<uint32_t>(value));
    case onyx::DataType::kInt32: return FillAll(t, static_cast<int32_t>(value));
    case onyx::DataType::kUint64: return FillAll(t, static_cast<uint64_t>(value));
    case onyx::DataType::kInt64: return FillAll(t, static_cast<int64_t>(value));
    case onyx::DataType::kBool: return FillAll(t, value != 0);
    case onyx::DataType::kFloat16:
      return FillAll(t, onyx::FloatToHalf(static_cast<float>(value)));
    case onyx::DataType::kBFloat16:
      return FillAll(t, onyx::FloatToBFloat16(static_cast<float>(value)));
    default:
      return;  // strings stay empty; complex types are never served
  }
}

// Copies the first `copy_len` positions along `axis` of `src` into the
// leading positions of `dst` (same rank and type, differing only along
// `axis`; copy_len <= both lengths): pads when dst is longer, slices when it
// is shorter.
void CopyAlongAxis(const onyx::Tensor& src, onyx::Tensor& dst, size_t axis, int64_t copy_len) {
  const onyx::Dims& s = src.dims();
  const onyx::Dims& d = dst.dims();
  int64_t outer = 1;
  for (size_t i = 0; i < axis; ++i) outer *= s[i];
  const int64_t inner = onyx::NumElements(absl::MakeConstSpan(s).subspan(axis + 1));
  const int64_t src_block = s[axis] * inner;
  const int64_t dst_block = d[axis] * inner;
  const int64_t n = copy_len * inner;
  if (src.type() == onyx::DataType::kString) {
    const std::string* from = src.data<std::string>();
    std::string* to = dst.mutable_data<std::string>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < n; ++i) to[o * dst_block + i] = from[o * src_block + i];
    }
    return;
  }
  const size_t elem = onyx::ElementSize(src.type());
  if (n == 0) return;
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(static_cast<char*>(dst.mutable_raw()) + o * dst_block * elem,
                static_cast<const char*>(src.raw()) + o * src_block * elem, n * elem);
  }
}

}  // namespace

absl::StatusOr<onyx::Tensor> PadAxis(const onyx::Tensor& tensor, size_t axis, int64_t size,
                                     double pad_value) {
  if (axis >= tensor.dims().size() || tensor.dims()[axis] > size) {
    return absl::InvalidArgumentError(absl::StrCat("PadAxis: cannot pad dimension ", axis, " of ",
                                                   onyx::DimsToString(tensor.dims()), " to ",
                                                   size));
  }
  if (tensor.dims()[axis] == size) return tensor;
  onyx::Dims dims = tensor.dims();
  dims[axis] = size;
  onyx::Tensor out = onyx::Tensor::Allocate(tensor.type(), dims);
  if (pad_value != 0) Fill(out, pad_value);
  CopyAlongAxis(tensor, out, axis, tensor.dims()[axis]);
  return out;
}

absl::StatusOr<onyx::Tensor> SliceAxis(const onyx::Tensor& tensor, size_t axis, int64_t length) {
  if (axis >= tensor.dims().size() || length < 0 || tensor.dims()[axis] < length) {
    return absl::InvalidArgumentError(absl::StrCat("SliceAxis: cannot take ", length,
                                                   " positions of dimension ", axis, " of ",
                                                   onyx::DimsToString(tensor.dims())));
  }
  if (tensor.dims()[axis] == length) return tensor;
  onyx::Dims dims = tensor.dims();
  dims[axis] = length;
  onyx::Tensor out = onyx::Tensor::Allocate(tensor.type(), dims);
  CopyAlongAxis(tensor, out, axis, length);
  return out;
}

absl::StatusOr<size_t> ChooseBucket(absl::Span<const int64_t> buckets, int64_t batch_size) {
  if (batch_size >= 1) {
    for (size_t i = 0; i < buckets.size(); ++i) {
      if (buckets[i] >= batch_size) return i;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "batch size ", batch_size, " does not fit any bucket: expected 1..",
      buckets.empty() ? 0 : buckets.back(), " (buckets [", absl::StrJoin(buckets, ", "), "])"));
}

absl::StatusOr<onyx::Tensor> ConcatAndPad(absl::Span<const onyx::Tensor> parts, int64_t rows) {
  if (parts.empty()) return absl::InvalidArgumentError("ConcatAndPad: no tensors");
  const onyx::Tensor& first = parts.front();
  if (first.rank() < 1) {
    return absl::InvalidArgumentError("ConcatAndPad: a scalar has no batch dimension");
  }
  int64_t total = 0;
  for (const onyx::Tensor& part : parts) {
    if (part.type() != first.type() || part.rank() != first.rank() ||
        !std::equal(part.dims().begin() + 1, part.dims().end(), first.dims().begin() + 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("ConcatAndPad: parts differ: ", onyx::DimsToString(first.dims()), " vs ",
                       onyx::DimsToString(part.dims())));
    }
    total += part.dims()[0];
  }
  if (total > rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConcatAndPad: ", total, " rows do not fit in ", rows));
  }
  if (parts.size() == 1 && total == rows) return first;
  onyx::Dims dims = first.dims();
  dims[0] = rows;
  onyx::Tensor out = onyx::Tensor::Allocate(first.type(), dims);  // zero-filled
  int64_t row = 0;
  for (const onyx::Tensor& part : parts) {
    CopyRows(part, 0, out, row, part.dims()[0]);
    row += part.dims()[0];
  }
  return out;
}

absl::StatusOr<onyx::Tensor> SliceRows(const onyx::Tensor& tensor, int64_t begin, int64_t count) {
  if (tensor.rank() < 1 || begin < 0 || count < 0 || begin + count > tensor.dims()[0]) {
    return absl::InvalidArgumentError(absl::StrCat("SliceRows: rows [", begin, ", ", begin + count,
                                                   ") out of range for ",
                                                   onyx::DimsToString(tensor.dims())));
  }
  if (begin == 0 && count == tensor.dims()[0]) return tensor;
  onyx::Dims dims = tensor.dims();
  dims[0] = count;
  onyx::Tensor out = onyx::Tensor::Allocate(tensor.type(), dims);
  CopyRows(tensor, begin, out, 0, count);
  return out;
}

}  // namespace onyx::server
