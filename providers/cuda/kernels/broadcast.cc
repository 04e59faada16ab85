#include "providers/cuda/kernels/broadcast.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onyx::cuda_ops {
namespace {

// `dims` right-aligned to `rank` (padded with leading 1s).
std::vector<int64_t> Aligned(absl::Span<const int64_t> dims, size_t rank) {
  std::vector<int64_t> out(rank - dims.size(), 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

}  // namespace

absl::StatusOr<Dims> BroadcastShape(const std::vector<absl::Span<const int64_t>>& inputs) {
  size_t rank = 0;
  for (const auto& d : inputs) rank = std::max(rank, d.size());
  Dims out(rank, 1);
  for (const auto& d : inputs) {
    const std::vector<int64_t> a = Aligned(d, rank);
    for (size_t k = 0; k < rank; ++k) {
      if (a[k] == out[k] || a[k] == 1) continue;
      if (out[k] != 1) {
        std::vector<std::string> shapes;
        for (const auto& s : inputs) shapes.push_back(DimsToString(s));
        return absl::InvalidArgumentError(
            absl::StrCat("shapes ", absl::StrJoin(shapes, ", "), " do not broadcast (dimension ", k, ")"));
      }
      out[k] = a[k];
    }
  }
  return out;
}

absl::StatusOr<BroadcastArgs> MakeBroadcastArgs(absl::Span<const int64_t> out,
                                                const std::vector<absl::Span<const int64_t>>& inputs) {
  BroadcastArgs args;
  args.n = NumElements(out);
  const size_t rank = out.size();
  const size_t count = inputs.size();
  std::vector<std::vector<int64_t>> strides(count);
  for (size_t i = 0; i < count; ++i) {
    const std::vector<int64_t> a = Aligned(inputs[i], rank);
    strides[i].assign(rank, 0);
    int64_t s = 1;
    for (int64_t k = static_cast<int64_t>(rank) - 1; k >= 0; --k) {
      strides[i][k] = (a[k] == 1 && out[k] != 1) ? 0 : s;
      s *= a[k];
    }
    args.contiguous[i] = NumElements(inputs[i]) == args.n;
    args.scalar[i] = NumElements(inputs[i]) == 1;
  }
  // Groups of merged output dims, outermost first.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> group_strides(count);
  for (size_t k = 0; k < rank; ++k) {
    if (out[k] == 1) continue;
    bool merge = !dims.empty();
    for (size_t i = 0; i < count && merge; ++i) merge = group_strides[i].back() == strides[i][k] * out[k];
    if (merge) {
      dims.back() *= out[k];
      for (size_t i = 0; i < count; ++i) group_strides[i].back() = strides[i][k];
    } else {
      dims.push_back(out[k]);
      for (size_t i = 0; i < count; ++i) group_strides[i].push_back(strides[i][k]);
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat("the broadcast to ", DimsToString(out), " needs ", dims.size(),
                                                   " dimensions; the CUDA kernels take ", kMaxRank));
  }
  args.rank = static_cast<int32_t>(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) {
    args.dims[k] = dims[k];
    for (size_t i = 0; i < count; ++i) args.strides[i][k] = group_strides[i][k];
  }
  return args;
}

absl::StatusOr<StridedCopyArgs> MakeStridedCopy(absl::Span<const int64_t> out_dims,
                                                absl::Span<const int64_t> in_strides, int64_t base) {
  StridedCopyArgs args;
  args.n = NumElements(out_dims);
  args.base = base;
  std::vector<int64_t> dims, strides;
  for (size_t k = 0; k < out_dims.size(); ++k) {
    if (out_dims[k] == 1) continue;
    if (!dims.empty() && strides.back() == in_strides[k] * out_dims[k]) {
      dims.back() *= out_dims[k];
      strides.back() = in_strides[k];
    } else {
      dims.push_back(out_dims[k]);
      strides.push_back(in_strides[k]);
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat("the copy into ", DimsToString(out_dims), " needs ", dims.size(),
                                                   " dimensions; the CUDA kernels take ", kMaxRank));
  }
  args.rank = static_cast<int32_t>(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) {
    args.out_dims[k] = dims[k];
    args.in_strides[k] = strides[k];
  }
  return args;
}

absl::StatusOr<StridedCopyArgs> MakeExpandCopy(absl::Span<const int64_t> x_dims, absl::Span<const int64_t> out_dims) {
  const std::vector<int64_t> a = Aligned(x_dims, out_dims.size());
  std::vector<int64_t> strides(out_dims.size(), 0);
  int64_t s = 1;
  for (int64_t k = static_cast<int64_t>(out_dims.size()) - 1; k >= 0; --k) {
    strides[k] = (a[k] == 1 && out_dims[k] != 1) ? 0 : s;
    s *= a[k];
  }
  return MakeStridedCopy(out_dims, strides, 0);
}

void WidenInnermost(StridedCopyArgs& args, size_t& elem_size, const void* x, const void* y) {
  if (args.rank == 0 || args.in_strides[args.rank - 1] != 1) return;
  const int last = args.rank - 1;
  for (size_t width : {size_t{16}, size_t{8}, size_t{4}, size_t{2}}) {
    if (width <= elem_size || width % elem_size != 0) continue;
    const int64_t f = static_cast<int64_t>(width / elem_size);
    bool ok = args.out_dims[last] % f == 0 && args.base % f == 0 && reinterpret_cast<uintptr_t>(x) % width == 0 &&
              reinterpret_cast<uintptr_t>(y) % width == 0;
    for (int k = 0; k < last && ok; ++k) ok = args.in_strides[k] % f == 0;
    if (!ok) continue;
    args.out_dims[last] /= f;
    for (int k = 0; k < last; ++k) args.in_strides[k] /= f;
    args.base /= f;
    args.n /= f;
    elem_size = width;
    return;
  }
}

absl::StatusOr<TransposePlan> PlanTranspose(absl::Span<const int64_t> dims, absl::Span<const int64_t> perm,
                                            size_t elem_size) {
  Dims in_strides(dims.size(), 1);
  for (int64_t k = static_cast<int64_t>(dims.size()) - 2; k >= 0; --k) in_strides[k] = in_strides[k + 1] * dims[k + 1];
  std::vector<int64_t> out_dims, strides;
  for (int64_t p : perm) {
    out_dims.push_back(dims[p]);
    strides.push_back(in_strides[p]);
  }
  TransposePlan plan;
  auto copy = MakeStridedCopy(out_dims, strides, 0);
  if (!copy.ok()) return copy.status();
  const StridedCopyArgs& c = *copy;
  const bool tileable = elem_size <= 8;
  if (c.rank <= 1 && (c.rank == 0 || c.in_strides[0] == 1)) {
    plan.kind = TransposePlan::Kind::kCopy;
  } else if (tileable && c.rank == 2 && c.in_strides[0] == 1 && c.in_strides[1] == c.out_dims[0]) {
    plan.kind = TransposePlan::Kind::kTiled;  // x [out1, out0] -> y [out0, out1]
    plan.rows = c.out_dims[1];
    plan.cols = c.out_dims[0];
  } else if (tileable && c.rank == 3 && c.in_strides[1] == 1 && c.in_strides[2] == c.out_dims[1] &&
             c.in_strides[0] == c.out_dims[1] * c.out_dims[2]) {
    plan.kind = TransposePlan::Kind::kTiled;  // x [b, out2, out1] -> y [b, out1, out2]
    plan.batch = c.out_dims[0];
    plan.rows = c.out_dims[2];
    plan.cols = c.out_dims[1];
  } else {
    plan.kind = TransposePlan::Kind::kStrided;
    plan.strided = c;
  }
  return plan;
}

}  // namespace onyx::cuda_ops
