// Index validation and addressing shared by the Gather* and Scatter* kernels.
//
//   std::vector<int64_t> idx;
//   RETURN_IF_ERROR(NormalizedIndices(indices, data.dims()[axis], "indices", &idx));
//   ASSIGN_OR_RETURN(ElementsIndexing ix, ElementsIndexing::Create(data, indices, axis));
//   ix.ForEach(idx, [&](int64_t i, int64_t data_offset) { out[i] = in[data_offset]; });
//
// Errors are INVALID_ARGUMENT naming the offending index or shape.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onyx/tensor.h"

namespace onyx {

// Reads int32/int64 `indices` into `out`, adding `extent` to negative values;
// INVALID_ARGUMENT (naming `what`) for other types or values outside
// [-extent, extent).
absl::Status NormalizedIndices(const Tensor& indices, int64_t extent, absl::string_view what,
                               std::vector<int64_t>* out);

// Addressing of GatherElements / ScatterElements: element i of `indices`
// (row-major) addresses data at i's coordinates with the `axis` coordinate
// replaced by the index value.
struct ElementsIndexing {
  // Checks equal ranks and that indices fit inside data off the axis.
  static absl::StatusOr<ElementsIndexing> Create(const Tensor& data, const Tensor& indices, int64_t axis);

  // Calls fn(i, data_offset) for every element i of the indices, in order.
  template <typename Fn>
  void ForEach(const std::vector<int64_t>& idx, Fn&& fn) const {
    const int64_t rank = static_cast<int64_t>(index_dims.size());
    const int64_t n = static_cast<int64_t>(idx.size());
    if (n == 0) return;
    if (rank == 0) {
      fn(0, idx[0] * data_strides[0]);
      return;
    }
    Dims coord(rank, 0);
    int64_t base = 0;  // offset of coord with the axis coordinate set to 0
    for (int64_t i = 0; i < n; ++i) {
      fn(i, base + idx[i] * data_strides[axis]);
      for (int64_t a = rank - 1; a >= 0; --a) {
        const int64_t step = a == axis ? 0 : data_strides[a];
        ++coord[a];
        base += step;
        if (coord[a] < index_dims[a]) break;
        base -= coord[a] * step;
        coord[a] = 0;
      }
    }
  }

  int64_t axis = 0;
  Dims index_dims;
  Dims data_strides;
};

// Addressing of GatherND / ScatterND: each index tuple (the last axis of
// `indices`) addresses a slice of `slice_size` contiguous data elements.
struct NdIndexing {
  static absl::StatusOr<NdIndexing> Create(const Tensor& data, const Tensor& indices, int64_t batch_dims);

  int64_t count() const { return static_cast<int64_t>(offsets.size()); }

  int64_t depth = 0;       // entries per index tuple
  int64_t slice_size = 1;  // elements addressed by one tuple
  std::vector<int64_t> offsets;  // data offset of each tuple's slice
};

}  // namespace onyx
