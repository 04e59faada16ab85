// Slice: starts/ends/axes attributes before opset 10, inputs (with steps)
// after. Bounds clamp as in the spec; the copy is one strided copy.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class Slice final : public OpKernel {
 public:
  explicit Slice(const OpKernelInfo& info) : from_attrs_(info.node().since_version < 10) {
    if (from_attrs_) {
      starts_ = info.AttrOr<std::vector<int64_t>>("starts", {});
      ends_ = info.AttrOr<std::vector<int64_t>>("ends", {});
      axes_ = info.AttrOr<std::vector<int64_t>>("axes", {});
    }
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    const int64_t rank = x.rank();
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (!from_attrs_) {
      static const char* kNames[] = {"", "input 'starts'", "input 'ends'", "input 'axes'", "input 'steps'"};
      std::vector<int64_t>* targets[] = {nullptr, &starts, &ends, &axes, &steps};
      for (int i = 1; i <= 4; ++i) {
        const Tensor* t = ctx.Input(i);
        if (t == nullptr) continue;
        absl::Status s = ReadInt64s(*t, kNames[i], targets[i]);
        if (!s.ok()) return ctx.Error(s.message());
      }
    }
    if (starts.size() != ends.size()) {
      return ctx.Error(absl::StrCat("starts has ", starts.size(), " entries but ends has ", ends.size()));
    }
    const size_t n = starts.size();
    if (axes.empty()) {
      for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(n, 1);
    if (axes.size() != n || steps.size() != n) {
      return ctx.Error(absl::StrCat("axes (", axes.size(), ") and steps (", steps.size(),
                                    ") must have as many entries as starts (", n, ")"));
    }
    Dims out_dims = x.dims();
    Dims start_of(rank, 0), step_of(rank, 1);
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < n; ++i) {
      int64_t axis = axes[i];
      if (!NormalizeAxis(axis, rank)) {
        return ctx.Error(absl::StrCat("axis ", axes[i], " is out of range for rank ", rank));
      }
      if (seen[axis]) return ctx.Error(absl::StrCat("axis ", axes[i], " is repeated"));
      seen[axis] = true;
      const int64_t dim = x.dims()[axis], step = steps[i];
      if (step == 0) return ctx.Error(absl::StrCat("step for axis ", axes[i], " is 0"));
      int64_t start = starts[i], end = ends[i];
      if (start < 0) start = start < -dim ? 0 : start + dim;
      if (end < 0) end = end < -dim ? -1 : end + dim;
      int64_t count;
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
        count = end > start ? (end - start - 1) / step + 1 : 0;
      } else {
        start = std::clamp<int64_t>(start, 0, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
        count = start > end ? (start - end - 1) / -step + 1 : 0;
      }
      out_dims[axis] = count;
      start_of[axis] = start;
      step_of[axis] = step;
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));
    if (y->num_elements() == 0) return absl::OkStatus();
    const Dims in_strides = StridesOf(x.dims());
    Dims src_strides(rank);
    int64_t base = 0;
    for (int64_t a = 0; a < rank; ++a) {
      base += start_of[a] * in_strides[a];
      src_strides[a] = in_strides[a] * step_of[a];
    }
    const size_t es = ElementSize(x.type());
    const char* src = static_cast<const char*>(x.raw()) + base * es;
    StridedCopy(x.type(), src, src_strides, y->mutable_raw(), StridesOf(out_dims), out_dims);
    return absl::OkStatus();
  }

 private:
  bool from_attrs_;
  std::vector<int64_t> starts_, ends_, axes_;
};

}  // namespace

void RegisterSliceKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Slice").Since(1).Build(), MakeFactory<Slice>());
}

}  // namespace onyx
