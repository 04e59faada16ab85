// Gather, GatherElements and GatherND. Indices (int32 or int64, negative
// counting from the end) are validated and normalised up front, then the
// copies move whole inner runs where the op allows.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/gather_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class Gather final : public OpKernel {
 public:
  explicit Gather(const OpKernelInfo& info) : axis_(info.AttrOr<int64_t>("axis", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& data = *ctx.Input(0);
    const Tensor& indices = *ctx.Input(1);
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, data.rank())) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", data.rank()));
    }
    const int64_t extent = data.dims()[axis];
    std::vector<int64_t> idx;
    absl::Status s = NormalizedIndices(indices, extent, "indices", &idx);
    if (!s.ok()) return ctx.Error(s.message());
    Dims out_dims(data.dims().begin(), data.dims().begin() + axis);
    out_dims.insert(out_dims.end(), indices.dims().begin(), indices.dims().end());
    out_dims.insert(out_dims.end(), data.dims().begin() + axis + 1, data.dims().end());
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, data.type()));
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= data.dims()[a];
    for (int64_t a = axis + 1; a < data.rank(); ++a) inner *= data.dims()[a];
    const int64_t n_idx = static_cast<int64_t>(idx.size());
    ParallelFor(outer * n_idx, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner)), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const int64_t o = k / n_idx, j = k % n_idx;
        CopyElements(data.type(), data.raw(), (o * extent + idx[j]) * inner, y->mutable_raw(), k * inner, inner);
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

class GatherElements final : public OpKernel {
 public:
  explicit GatherElements(const OpKernelInfo& info) : axis_(info.AttrOr<int64_t>("axis", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& data = *ctx.Input(0);
    const Tensor& indices = *ctx.Input(1);
    auto created = ElementsIndexing::Create(data, indices, axis_);
    if (!created.ok()) return ctx.Error(created.status().message());
    const ElementsIndexing& ix = *created;
    std::vector<int64_t> idx;
    absl::Status s = NormalizedIndices(indices, data.dims()[ix.axis], "indices", &idx);
    if (!s.ok()) return ctx.Error(s.message());
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, indices.dims(), data.type()));
    return DispatchStorage(data.type(), [&](auto tag) {
      using E = decltype(tag);
      const E* src = data.data<E>();
      E* dst = y->mutable_data<E>();
      ix.ForEach(idx, [&](int64_t i, int64_t data_offset) { dst[i] = src[data_offset]; });
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_;
};

class GatherND final : public OpKernel {
 public:
  explicit GatherND(const OpKernelInfo& info) : batch_dims_(info.AttrOr<int64_t>("batch_dims", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& data = *ctx.Input(0);
    const Tensor& indices = *ctx.Input(1);
    auto created = NdIndexing::Create(data, indices, batch_dims_);
    if (!created.ok()) return ctx.Error(created.status().message());
    const NdIndexing& ix = *created;
    Dims out_dims(indices.dims().begin(), indices.dims().end() - 1);
    out_dims.insert(out_dims.end(), data.dims().begin() + batch_dims_ + ix.depth, data.dims().end());
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, data.type()));
    const int64_t slice = ix.slice_size;
    ParallelFor(ix.count(), std::max<int64_t>(1, 16384 / std::max<int64_t>(1, slice)), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        CopyElements(data.type(), data.raw(), ix.offsets[k], y->mutable_raw(), k * slice, slice);
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

void RegisterGatherKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Gather").Since(1).Build(), MakeFactory<Gather>());
  r.Register(KernelDefBuilder("GatherElements").Since(11).Build(), MakeFactory<GatherElements>());
  r.Register(KernelDefBuilder("GatherND").Since(11).Build(), MakeFactory<GatherND>());
}

}  // namespace onyx
