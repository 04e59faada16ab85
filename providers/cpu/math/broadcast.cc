#include "providers/cpu/math/broadcast.h"

#include "absl/strings/str_cat.h"

namespace onyx {

absl::StatusOr<Dims> BroadcastShape(absl::Span<const int64_t> a, absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("shapes ", DimsToString(a), " and ", DimsToString(b),
                                                     " cannot be broadcast (dimension ", i, ": ", da, " vs ",
                                                     db, ")"));
    }
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(absl::Span<const int64_t> dims, absl::Span<const int64_t> out_dims) {
  const size_t rank = out_dims.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t k = 0; k < dims.size(); ++k) {
    size_t d = dims.size() - 1 - k;
    size_t o = rank - 1 - k;
    strides[o] = dims[d] == 1 ? 0 : stride;
    stride *= dims[d];
  }
  return strides;
}

}  // namespace onyx
