#include "providers/cpu/math/reduce_plan.h"

#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

struct Block {
  int64_t size;
  int64_t stride;
  bool reduced;
};

// Offsets of every multi-index over `blocks`, last block fastest.
std::vector<int64_t> Offsets(const std::vector<Block>& blocks) {
  std::vector<int64_t> out = {0};
  for (const Block& b : blocks) {
    std::vector<int64_t> next;
    next.reserve(out.size() * b.size);
    for (int64_t base : out) {
      for (int64_t i = 0; i < b.size; ++i) next.push_back(base + i * b.stride);
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace

ReducePlan ReducePlan::Make(absl::Span<const int64_t> dims, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) reduced[a] = true;
  ReducePlan plan;
  for (int64_t d = 0; d < rank; ++d) {
    plan.out_keepdims.push_back(reduced[d] ? 1 : dims[d]);
    if (!reduced[d]) plan.out_squeezed.push_back(dims[d]);
    if (reduced[d]) plan.reduced_count *= dims[d];
  }
  // Merge adjacent dims of the same kind, dropping size-1 dims.
  std::vector<Block> blocks;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (dims[d] != 1) {
      if (!blocks.empty() && blocks.back().reduced == reduced[d] &&
          blocks.back().stride * blocks.back().size == stride) {
        blocks.back().size *= dims[d];
      } else {
        blocks.push_back(Block{dims[d], stride, reduced[d]});
      }
    }
    stride *= dims[d];
  }
  std::reverse(blocks.begin(), blocks.end());
  if (!blocks.empty()) {
    plan.inner = blocks.back().size;
    plan.inner_kept = !blocks.back().reduced;
    blocks.pop_back();
  }
  std::vector<Block> kept, red;
  for (const Block& b : blocks) (b.reduced ? red : kept).push_back(b);
  plan.keep = Offsets(kept);
  plan.red = Offsets(red);
  return plan;
}

absl::StatusOr<std::vector<int64_t>> NormalizeAxes(absl::Span<const int64_t> axes, int64_t rank) {
  std::vector<int64_t> out;
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", a, " is out of range [", -rank, ", ", rank - 1, "] for rank ", rank));
    }
    const int64_t n = a < 0 ? a + rank : a;
    if (seen[n]) return absl::InvalidArgumentError(absl::StrCat("axis ", a, " is repeated"));
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

}  // namespace onyx
