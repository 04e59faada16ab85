// Expand and Tile: both are one strided copy. Expand reads broadcast axes with
// stride 0; Tile iterates (repeat, axis) pairs with the repeat reading stride 0.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class Expand final : public OpKernel {
 public:
  explicit Expand(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    const Tensor& shape = *ctx.Input(1);
    std::vector<int64_t> requested;
    absl::Status s = ReadInt64s(shape, "input 'shape'", &requested);
    if (!s.ok()) return ctx.Error(s.message());
    auto out_dims = BroadcastShape(x.dims(), requested);
    if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
    RETURN_IF_ERROR(CheckOutputDims(ctx, *out_dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, *out_dims, x.type()));
    const std::vector<int64_t> src_strides = BroadcastStrides(x.dims(), *out_dims);
    StridedCopy(x.type(), x.raw(), src_strides, y->mutable_raw(), StridesOf(*out_dims), *out_dims);
    return absl::OkStatus();
  }
};

class Tile final : public OpKernel {
 public:
  explicit Tile(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    std::vector<int64_t> repeats;
    absl::Status s = ReadInt64s(*ctx.Input(1), "input 'repeats'", &repeats);
    if (!s.ok()) return ctx.Error(s.message());
    const int64_t rank = x.rank();
    if (static_cast<int64_t>(repeats.size()) != rank) {
      return ctx.Error(absl::StrCat("repeats has ", repeats.size(), " entries but the input has rank ", rank));
    }
    Dims out_dims(rank);
    for (int64_t a = 0; a < rank; ++a) {
      if (repeats[a] < 0) return ctx.Error(absl::StrCat("repeats[", a, "] = ", repeats[a], " is negative"));
      out_dims[a] = x.dims()[a] * repeats[a];
      if (repeats[a] != 0 && out_dims[a] / repeats[a] != x.dims()[a]) {
        return ctx.Error("repeats overflow the output size");
      }
    }
    RETURN_IF_ERROR(CheckOutputDims(ctx, out_dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));
    const Dims in_strides = StridesOf(x.dims()), out_strides = StridesOf(out_dims);
    Dims iter, src, dst;
    for (int64_t a = 0; a < rank; ++a) {
      iter.push_back(repeats[a]);
      src.push_back(0);
      dst.push_back(x.dims()[a] * out_strides[a]);
      iter.push_back(x.dims()[a]);
      src.push_back(in_strides[a]);
      dst.push_back(out_strides[a]);
    }
    StridedCopy(x.type(), x.raw(), src, y->mutable_raw(), dst, iter);
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterExpandTileKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Expand").Since(8).Build(), MakeFactory<Expand>());
  r.Register(KernelDefBuilder("Tile").Since(6).Build(), MakeFactory<Tile>());
}

}  // namespace onyx
