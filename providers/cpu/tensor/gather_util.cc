#include "providers/cpu/tensor/gather_util.h"

#include "absl/strings/str_cat.h"
#include "providers/cpu/tensor/copy_util.h"

namespace onyx {
namespace {

template <typename I>
absl::Status Normalize(const I* p, int64_t n, int64_t extent, absl::string_view what, std::vector<int64_t>* out) {
  out->resize(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = static_cast<int64_t>(p[i]);
    if (v < -extent || v >= extent) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "[", i, "] = ", v, " is out of range [", -extent, ", ", extent, ")"));
    }
    (*out)[i] = v < 0 ? v + extent : v;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NormalizedIndices(const Tensor& indices, int64_t extent, absl::string_view what,
                               std::vector<int64_t>* out) {
  if (indices.type() == DataType::kInt64) {
    return Normalize(indices.data<int64_t>(), indices.num_elements(), extent, what, out);
  }
  if (indices.type() == DataType::kInt32) {
    return Normalize(indices.data<int32_t>(), indices.num_elements(), extent, what, out);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be int32 or int64, received ", DataTypeName(indices.type())));
}

absl::StatusOr<ElementsIndexing> ElementsIndexing::Create(const Tensor& data, const Tensor& indices, int64_t axis) {
  const int64_t rank = data.rank();
  if (indices.rank() != rank) {
    return absl::InvalidArgumentError(absl::StrCat("indices ", DimsToString(indices.dims()),
                                                   " must have the rank of data ", DimsToString(data.dims())));
  }
  int64_t a = axis;
  if (rank == 0 || !NormalizeAxis(a, rank)) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (d != a && indices.dims()[d] > data.dims()[d]) {
      return absl::InvalidArgumentError(absl::StrCat("indices ", DimsToString(indices.dims()),
                                                     " exceed data ", DimsToString(data.dims()), " on axis ", d));
    }
  }
  ElementsIndexing ix;
  ix.axis = a;
  ix.index_dims = indices.dims();
  ix.data_strides = StridesOf(data.dims());
  return ix;
}

absl::StatusOr<NdIndexing> NdIndexing::Create(const Tensor& data, const Tensor& indices, int64_t batch_dims) {
  const int64_t r = data.rank(), q = indices.rank(), b = batch_dims;
  if (r < 1 || q < 1 || b < 0 || b >= std::min(r, q)) {
    return absl::InvalidArgumentError(absl::StrCat("batch_dims ", b, " is invalid for data ", DimsToString(data.dims()),
                                                   " and indices ", DimsToString(indices.dims())));
  }
  const int64_t k = indices.dims()[q - 1];
  if (k < 1 || k > r - b) {
    return absl::InvalidArgumentError(absl::StrCat("indices' last dimension ", k, " must be in [1, ", r - b,
                                                   "] for data ", DimsToString(data.dims())));
  }
  for (int64_t i = 0; i < b; ++i) {
    if (indices.dims()[i] != data.dims()[i]) {
      return absl::InvalidArgumentError(absl::StrCat("batch dimension ", i, " differs: data ",
                                                     DimsToString(data.dims()), ", indices ",
                                                     DimsToString(indices.dims())));
    }
  }
  if (indices.type() != DataType::kInt64 && indices.type() != DataType::kInt32) {
    return absl::InvalidArgumentError(absl::StrCat("indices must be int64, received ", DataTypeName(indices.type())));
  }
  NdIndexing ix;
  ix.depth = k;
  for (int64_t a = b + k; a < r; ++a) ix.slice_size *= data.dims()[a];
  const Dims strides = StridesOf(data.dims());
  const int64_t batch_stride = b > 0 ? strides[b - 1] : 0;
  int64_t tuples = indices.num_elements() / k;
  int64_t per_batch = 1;
  for (int64_t a = b; a < q - 1; ++a) per_batch *= indices.dims()[a];
  ix.offsets.resize(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = per_batch > 0 ? (t / per_batch) * batch_stride : 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t raw = indices.type() == DataType::kInt64 ? indices.data<int64_t>()[t * k + j]
                                                             : indices.data<int32_t>()[t * k + j];
      const int64_t extent = data.dims()[b + j];
      if (raw < -extent || raw >= extent) {
        return absl::InvalidArgumentError(absl::StrCat("index ", raw, " (tuple ", t, ", entry ", j,
                                                       ") is out of range for dimension of size ", extent));
      }
      off += (raw < 0 ? raw + extent : raw) * strides[b + j];
    }
    ix.offsets[t] = off;
  }
  return ix;
}

}  // namespace onyx
