// Numpy-style (multidirectional) broadcasting for element-wise kernels.
//
//   ASSIGN_OR_RETURN(Dims out, BroadcastShape(a.dims(), b.dims()));
//   BroadcastBinary<float>(a, b, *y, [](float x, float z) { return x + z; });
//
// The loops walk the output row by row with the innermost dimension contiguous,
// so the compiler vectorises the common same-shape and scalar cases.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/parallel_for.h"
#include "onyx/tensor.h"

namespace onyx {

// INVALID_ARGUMENT naming both shapes when they cannot be broadcast.
absl::StatusOr<Dims> BroadcastShape(absl::Span<const int64_t> a, absl::Span<const int64_t> b);

// Strides (in elements) of `dims` aligned right to an output of rank `rank`,
// with 0 for broadcast dimensions.
std::vector<int64_t> BroadcastStrides(absl::Span<const int64_t> dims, absl::Span<const int64_t> out_dims);

// Calls fn(out_offset, a_offset, b_offset, inner, a_step, b_step) per output row.
template <typename Fn>
void ForEachBroadcastRow(absl::Span<const int64_t> out_dims, const std::vector<int64_t>& a_strides,
                         const std::vector<int64_t>& b_strides, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(out_dims.size());
  const int64_t inner = rank == 0 ? 1 : out_dims[rank - 1];
  const int64_t a_step = rank == 0 ? 0 : a_strides[rank - 1];
  const int64_t b_step = rank == 0 ? 0 : b_strides[rank - 1];
  const int64_t total = NumElements(out_dims);
  if (inner == 0 || total == 0) return;
  const int64_t rows = total / inner;
  auto run_rows = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(rank > 0 ? rank - 1 : 0, 0);
    int64_t rem = begin;
    int64_t a_off = 0, b_off = 0;
    for (int64_t d = rank - 2; d >= 0; --d) {
      index[d] = rem % out_dims[d];
      rem /= out_dims[d];
      a_off += index[d] * a_strides[d];
      b_off += index[d] * b_strides[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      fn(r * inner, a_off, b_off, inner, a_step, b_step);
      for (int64_t d = rank - 2; d >= 0; --d) {
        ++index[d];
        a_off += a_strides[d];
        b_off += b_strides[d];
        if (index[d] < out_dims[d]) break;
        a_off -= index[d] * a_strides[d];
        b_off -= index[d] * b_strides[d];
        index[d] = 0;
      }
    }
  };
  ParallelFor(rows, std::max<int64_t>(1, 16384 / inner), run_rows);
}

// out = op(a, b) elementwise with broadcasting; `b` may have a different element
// type In2 (Pow's exponent).
template <typename In, typename Out, typename In2 = In, typename Op>
void BroadcastBinary(const Tensor& a, const Tensor& b, Tensor& out, Op op) {
  const In* pa = a.data<In>();
  const In2* pb = b.data<In2>();
  Out* po = out.mutable_data<Out>();
  const int64_t n = out.num_elements();
  if (a.num_elements() == n && b.num_elements() == n) {
    ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = op(pa[i], pb[i]);
    });
    return;
  }
  if (b.num_elements() == 1 && a.num_elements() == n) {
    const In2 s = pb[0];
    ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = op(pa[i], s);
    });
    return;
  }
  if (a.num_elements() == 1 && b.num_elements() == n) {
    const In s = pa[0];
    ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = op(s, pb[i]);
    });
    return;
  }
  auto as = BroadcastStrides(a.dims(), out.dims());
  auto bs = BroadcastStrides(b.dims(), out.dims());
  // The unit- and zero-step rows (a channels-last tensor times a per-channel
  // vector, or the reverse) get loops of their own so that they vectorise.
  ForEachBroadcastRow(out.dims(), as, bs,
                      [&](int64_t o, int64_t ao, int64_t bo, int64_t inner, int64_t astep, int64_t bstep) {
    Out* y = po + o;
    const In* x = pa + ao;
    const In2* z = pb + bo;
    if (astep == 1 && bstep == 1) {
      for (int64_t i = 0; i < inner; ++i) y[i] = op(x[i], z[i]);
    } else if (astep == 1 && bstep == 0) {
      const In2 s = z[0];
      for (int64_t i = 0; i < inner; ++i) y[i] = op(x[i], s);
    } else if (astep == 0 && bstep == 1) {
      const In s = x[0];
      for (int64_t i = 0; i < inner; ++i) y[i] = op(s, z[i]);
    } else {
      for (int64_t i = 0; i < inner; ++i) y[i] = op(x[i * astep], z[i * bstep]);
    }
  });
}

}  // namespace onyx
