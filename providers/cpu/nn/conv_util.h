// Im2Col / Col2Im and the grouped convolution loop shared by Conv,
// ConvInteger, QLinearConv and ConvTranspose, templated on the element type.
//
// For one image of `channels` channels and geometry g (input g.in, output
// g.out), col is a [channels * K, OUT] matrix (K = kernel positions, OUT = output
// positions): col[(c * K + k) * OUT + o] = image[c][o * stride - pad + k * dilation],
// or 0 outside the image. Col2Im is its adjoint: it accumulates col back into
// the image, which is how ConvTranspose scatters its products.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "providers/cpu/math/gemm_util.h"
#include "providers/cpu/nn/conv_attributes.h"

namespace onyx {

namespace im2col_internal {

// Calls fn(k, o, image_offset) for every kernel position k and output position
// o that falls inside the image, for one channel.
template <typename Fn>
void ForEachTap(const SpatialGeometry& g, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(g.in.size());
  int64_t kernel_size = 1, out_size = 1;
  for (int64_t i = 0; i < rank; ++i) {
    kernel_size *= g.kernel[i];
    out_size *= g.out[i];
  }
  std::vector<int64_t> k_idx(rank), o_idx(rank);
  for (int64_t k = 0; k < kernel_size; ++k) {
    int64_t rem = k;
    for (int64_t d = rank - 1; d >= 0; --d) {
      k_idx[d] = rem % g.kernel[d];
      rem /= g.kernel[d];
    }
    std::fill(o_idx.begin(), o_idx.end(), 0);
    for (int64_t o = 0; o < out_size; ++o) {
      int64_t offset = 0;
      bool inside = true;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t pos = o_idx[d] * g.strides[d] - g.pad_begin[d] + k_idx[d] * g.dilations[d];
        if (pos < 0 || pos >= g.in[d]) {
          inside = false;
          break;
        }
        offset = offset * g.in[d] + pos;
      }
      if (inside) fn(k, o, offset);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++o_idx[d] < g.out[d]) break;
        o_idx[d] = 0;
      }
    }
  }
}

}  // namespace im2col_internal

template <typename T>
void Im2Col(const T* image, int64_t channels, const SpatialGeometry& g, T* col) {
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
  for (size_t i = 0; i < g.in.size(); ++i) {
    in_size *= g.in[i];
    kernel_size *= g.kernel[i];
    out_size *= g.out[i];
  }
  if (g.in.size() == 2) {  // the common case, kept tight
    const int64_t oh = g.out[0], ow = g.out[1], iw = g.in[1], sx = g.strides[1];
    // Channels split across the intra-op threads; each writes its own rows.
    ParallelFor(channels, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, kernel_size * out_size)),
                [&](int64_t c_begin, int64_t c_end) {
      for (int64_t c = c_begin; c < c_end; ++c) {
        const T* src = image + c * in_size;
        for (int64_t k = 0; k < kernel_size; ++k) {
          const int64_t ky = k / g.kernel[1], kx = k % g.kernel[1];
          // Input column of output x: x * sx + ox; [x_lo, x_hi) lands inside.
          const int64_t ox = kx * g.dilations[1] - g.pad_begin[1];
          const int64_t x_lo = std::min(ow, ox >= 0 ? int64_t{0} : (-ox + sx - 1) / sx);
          const int64_t x_hi = std::max(x_lo, iw - 1 - ox >= 0 ? std::min(ow, (iw - 1 - ox) / sx + 1) : int64_t{0});
          T* dst = col + (c * kernel_size + k) * out_size;
          for (int64_t y = 0; y < oh; ++y) {
            const int64_t iy = y * g.strides[0] - g.pad_begin[0] + ky * g.dilations[0];
            T* row = dst + y * ow;
            if (iy < 0 || iy >= g.in[0]) {
              std::fill(row, row + ow, T(0));
              continue;
            }
            const T* srow = src + iy * iw + ox;
            std::fill(row, row + x_lo, T(0));
            if (sx == 1) {
              std::copy(srow + x_lo, srow + x_hi, row + x_lo);
            } else {
              for (int64_t x = x_lo; x < x_hi; ++x) row[x] = srow[x * sx];
            }
            std::fill(row + x_hi, row + ow, T(0));
          }
        }
      }
    });
    return;
  }
  std::fill(col, col + channels * kernel_size * out_size, T(0));
  for (int64_t c = 0; c < channels; ++c) {
    const T* src = image + c * in_size;
    T* dst = col + c * kernel_size * out_size;
    im2col_internal::ForEachTap(g, [&](int64_t k, int64_t o, int64_t off) { dst[k * out_size + o] = src[off]; });
  }
}

// image[c][...] += the taps of col; the caller zeroes or initialises image.
template <typename T>
void Col2Im(const T* col, int64_t channels, const SpatialGeometry& g, T* image) {
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
  for (size_t i = 0; i < g.in.size(); ++i) {
    in_size *= g.in[i];
    kernel_size *= g.kernel[i];
    out_size *= g.out[i];
  }
  for (int64_t c = 0; c < channels; ++c) {
    T* dst = image + c * in_size;
    const T* src = col + c * kernel_size * out_size;
    im2col_internal::ForEachTap(g, [&](int64_t k, int64_t o, int64_t off) { dst[off] += src[k * out_size + o]; });
  }
}

// C = op(A) * op(B) (+ C when accumulate): sgemm for float, a plain loop otherwise.
template <typename T>
absl::Status GemmAny(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                     const T* b, int64_t ldb, bool accumulate, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    return Sgemm(trans_a, trans_b, m, n, k, 1.f, a, lda, b, ldb, accumulate ? 1.f : 0.f, c, ldc);
  } else {
    GemmReference<T>(trans_a, trans_b, m, n, k, T(1), a, lda, b, ldb, accumulate ? T(1) : T(0), c, ldc);
    return absl::OkStatus();
  }
}

// Grouped convolution without bias: y[n, oc, ...] = sum W[oc] * x-window, for
// x [batch, in_c, g.in...], w [out_c, in_c / group, g.kernel...] and y [batch,
// out_c, g.out...]. 1x1 stride-1 unpadded kernels skip im2col.
template <typename T>
absl::Status ConvForward(const T* x, const T* w, int64_t batch, int64_t in_c, int64_t out_c, int64_t group,
                         const SpatialGeometry& g, T* y) {
  int64_t in_size = 1, out_size = 1, kernel_size = 1;
  bool pointwise = true;
  for (size_t i = 0; i < g.in.size(); ++i) {
    in_size *= g.in[i];
    out_size *= g.out[i];
    kernel_size *= g.kernel[i];
    pointwise &= g.kernel[i] == 1 && g.strides[i] == 1 && g.pad_begin[i] == 0 && g.pad_end[i] == 0;
  }
  const int64_t cin_g = in_c / group, cout_g = out_c / group;
  const int64_t col_rows = cin_g * kernel_size;
  T* col = pointwise ? nullptr : KernelScratch<T>(kScratchIm2Col, col_rows * out_size);
  if (!pointwise && col == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the ", col_rows * out_size * sizeof(T), "-byte im2col buffer"));
  }
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const T* image = x + (n * in_c + gi * cin_g) * in_size;
      const T* b_matrix = image;
      if (!pointwise) {
        Im2Col(image, cin_g, g, col);
        b_matrix = col;
      }
      T* out = y + (n * out_c + gi * cout_g) * out_size;
      absl::Status s = GemmAny<T>(false, false, cout_g, out_size, col_rows, w + gi * cout_g * col_rows, col_rows,
                                  b_matrix, out_size, false, out, out_size);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace onyx
