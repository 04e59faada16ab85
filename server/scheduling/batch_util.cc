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

}  // namespace

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
