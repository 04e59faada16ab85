#include "providers/cpu/math/matmul_shape.h"

#include "absl/strings/str_cat.h"
#include "providers/cpu/math/broadcast.h"

namespace onyx {

absl::StatusOr<MatMulShape> MatMulShape::Make(absl::Span<const int64_t> a, absl::Span<const int64_t> b) {
  if (a.empty() || b.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("operands must have rank >= 1, received ", DimsToString(a),
                                                   " and ", DimsToString(b)));
  }
  Dims ad(a.begin(), a.end()), bd(b.begin(), b.end());
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), 1);
  if (b_vec) bd.push_back(1);
  MatMulShape s;
  s.m = ad[ad.size() - 2];
  s.k = ad.back();
  s.n = bd.back();
  if (s.k != bd[bd.size() - 2]) {
    return absl::InvalidArgumentError(
        absl::StrCat("inner dimensions differ: ", DimsToString(a), " x ", DimsToString(b)));
  }
  Dims a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
  auto batch = BroadcastShape(a_batch, b_batch);
  if (!batch.ok()) return batch.status();
  s.out = *batch;
  if (!a_vec) s.out.push_back(s.m);
  if (!b_vec) s.out.push_back(s.n);
  s.batches = NumElements(*batch);
  s.b_shared = NumElements(b_batch) == 1 && NumElements(a_batch) == s.batches;
  auto a_strides = BroadcastStrides(a_batch, *batch);
  auto b_strides = BroadcastStrides(b_batch, *batch);
  s.a_offset.resize(s.batches);
  s.b_offset.resize(s.batches);
  for (int64_t i = 0; i < s.batches; ++i) {
    int64_t rem = i, a_off = 0, b_off = 0;
    for (int64_t d = static_cast<int64_t>(batch->size()) - 1; d >= 0; --d) {
      const int64_t idx = rem % (*batch)[d];
      rem /= (*batch)[d];
      a_off += idx * a_strides[d];
      b_off += idx * b_strides[d];
    }
    s.a_offset[i] = a_off;
    s.b_offset[i] = b_off;
  }
  return s;
}

}  // namespace onyx
