// Slice (attributes before opset 10, constant starts/ends/axes/steps inputs
// from 10), any element type and negative steps: a strided copy, or one
// contiguous copy when the slice is a single block.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/broadcast.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

class Slice final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    RETURN_IF_ERROR(CheckSliceNode(info));
    auto k = std::unique_ptr<Slice>(new Slice());
    if (info.node().since_version < 10) {
      k->starts_ = info.AttrOr<std::vector<int64_t>>("starts", {});
      k->ends_ = info.AttrOr<std::vector<int64_t>>("ends", {});
      k->axes_ = info.AttrOr<std::vector<int64_t>>("axes", {});
    } else {
      const char* names[] = {"starts", "ends", "axes", "steps"};
      std::vector<int64_t>* targets[] = {&k->starts_, &k->ends_, &k->axes_, &k->steps_};
      for (int i = 1; i <= 4; ++i) {
        if (const Tensor* t = info.ConstantInput(i)) {
          ASSIGN_OR_RETURN(*targets[i - 1], ReadInt64s(info, *t, names[i - 1]));
        }
      }
    }
    if (k->starts_.size() != k->ends_.size() || (!k->axes_.empty() && k->axes_.size() != k->starts_.size()) ||
        (!k->steps_.empty() && k->steps_.size() != k->starts_.size())) {
      return info.Error(absl::StrCat("starts (", k->starts_.size(), "), ends (", k->ends_.size(), "), axes (",
                                     k->axes_.size(), ") and steps (", k->steps_.size(), ") must have one length"));
    }
    for (int64_t s : k->steps_) {
      if (s == 0) return info.Error("steps must not be 0");
    }
    RETURN_IF_ERROR(k->UploadConstantInputs(info, {1, 2, 3, 4}));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    const int64_t rank = x->rank();
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    std::vector<int64_t> start(rank, 0), step(rank, 1);
    Dims out_dims = x->dims();
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < starts_.size(); ++i) {
      int64_t axis = axes_.empty() ? static_cast<int64_t>(i) : axes_[i];
      if (!NormalizeAxis(axis, rank) || seen[axis]) {
        return ctx.Error(absl::StrCat("axes entry ", i, " is out of range or repeated for rank ", rank));
      }
      seen[axis] = true;
      const int64_t dim = x->dims()[axis];
      const int64_t st = steps_.empty() ? 1 : steps_[i];
      int64_t b = starts_[i], e = ends_[i];
      if (b < 0) b += dim;
      if (e < 0) e += dim;
      int64_t count;
      if (dim == 0) {
        count = 0;
      } else if (st > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        count = e > b ? (e - b + st - 1) / st : 0;
      } else {
        b = std::clamp<int64_t>(b, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        count = b > e ? (b - e + (-st) - 1) / (-st) : 0;
      }
      start[axis] = b;
      step[axis] = st;
      out_dims[axis] = count;
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, x->type()));
    if (y->num_elements() == 0) return absl::OkStatus();
    const Dims strides = StridesOf(x->dims());
    int64_t base = 0;
    std::vector<int64_t> in_strides(rank);
    for (int64_t d = 0; d < rank; ++d) {
      base += start[d] * strides[d];
      in_strides[d] = step[d] * strides[d];
    }
    auto args = MakeStridedCopy(out_dims, in_strides, base);
    if (!args.ok()) return ctx.Error(args.status().message());
    size_t elem = ElementSize(x->type());
    const cudaStream_t stream = CurrentCudaLane().stream;
    if (args->rank == 0 || (args->rank == 1 && args->in_strides[0] == 1)) {
      const char* src = static_cast<const char*>(x->raw()) + base * elem;
      return CheckLaunch(ctx, cudaMemcpyAsync(y->mutable_raw(), src, y->byte_size(), cudaMemcpyDeviceToDevice, stream));
    }
    WidenInnermost(*args, elem, x->raw(), y->raw());
    return CheckLaunch(ctx, LaunchStridedCopy(elem, *args, x->raw(), y->mutable_raw(), stream));
  }

 private:
  Slice() = default;
  std::vector<int64_t> starts_, ends_, axes_, steps_;  // axes empty: 0, 1, ...; steps empty: 1
};

}  // namespace

absl::Status CheckSliceNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (!n.domain.empty() || n.op_type != "Slice" || n.since_version < 10) return absl::OkStatus();
  const char* names[] = {"starts", "ends", "axes", "steps"};
  for (int i = 1; i <= 4; ++i) RETURN_IF_ERROR(RequireConstantInput(info, i, names[i - 1]));
  return absl::OkStatus();
}

void RegisterSliceKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Slice").Since(1).Types("T", kCudaCopyTypes).Build(), Slice::Create);
}

}  // namespace onyx::cuda_ops
