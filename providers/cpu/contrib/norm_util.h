// Row statistics shared by the contrib normalization kernels (layer_norm.cc,
// embed_layer_norm.cc).
#pragma once

#include <cstdint>

namespace onyx {

// mean = sum(x) / n and m2 = sum((x - mean)^2) over n floats (two passes,
// with eight partial sums so that the loops vectorise).
void RowMeanM2(const float* x, int64_t n, float* mean, float* m2);

// sum(x^2) over n floats.
float RowSumSquares(const float* x, int64_t n);

// y[i] = (x[i] - mean) * inv * scale[i] + (shift ? shift[i] : 0).
void NormalizeRow(const float* x, int64_t n, float mean, float inv, const float* scale, const float* shift, float* y);

}  // namespace onyx
