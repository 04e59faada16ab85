// Concat and Split along one axis, any element type: each input (output) is
// one pitched device-to-device copy, [outer rows] x [its axis extent x inner]
// bytes, into (out of) its column block of the joined tensor.
#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"

namespace onyx::cuda_ops {
namespace {

// Copies `rows` rows of `width` bytes between pitched buffers on the stream.
cudaError_t CopyBlock(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width, int64_t rows,
                      cudaStream_t stream) {
  if (width == 0 || rows == 0) return cudaSuccess;
  if (rows == 1 || (dst_pitch == width && src_pitch == width)) {
    return cudaMemcpyAsync(dst, src, width * rows, cudaMemcpyDeviceToDevice, stream);
  }
  return cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDeviceToDevice, stream);
}

class Concat final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(int64_t axis, info.Attr<int64_t>("axis"));
    auto k = std::unique_ptr<Concat>(new Concat(axis));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < ctx.InputCount(); ++i) {
      ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i));
      inputs.push_back(t);
    }
    if (inputs.empty()) return ctx.Error("needs at least one input");
    const Tensor& first = *inputs[0];
    const int64_t rank = first.rank();
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, rank)) return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", rank));
    Dims out_dims = first.dims();
    out_dims[axis] = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = *inputs[i];
      bool match = t.type() == first.type() && t.rank() == rank;
      for (int64_t d = 0; d < rank && match; ++d) match = d == axis || t.dims()[d] == first.dims()[d];
      if (!match) {
        return ctx.Error(absl::StrCat("input ", i, " ", DataTypeName(t.type()), " ", DimsToString(t.dims()),
                                      " does not match input 0 ", DataTypeName(first.type()), " ",
                                      DimsToString(first.dims()), " outside axis ", axis));
      }
      out_dims[axis] += t.dims()[axis];
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, first.type()));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= out_dims[d];
      if (d > axis) inner *= out_dims[d];
    }
    const size_t elem = ElementSize(first.type());
    const size_t dst_pitch = static_cast<size_t>(out_dims[axis] * inner) * elem;
    char* dst = static_cast<char*>(y->mutable_raw());
    const cudaStream_t stream = CurrentCudaLane().stream;
    for (const Tensor* t : inputs) {
      const size_t width = static_cast<size_t>(t->dims()[axis] * inner) * elem;
      RETURN_IF_ERROR(CheckLaunch(ctx, CopyBlock(dst, dst_pitch, t->raw(), width, width, outer, stream)));
      dst += width;
    }
    return absl::OkStatus();
  }

 private:
  explicit Concat(int64_t axis) : axis_(axis) {}
  int64_t axis_;
};

class Split final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    RETURN_IF_ERROR(CheckConcatSplitNode(info));
    auto k = std::unique_ptr<Split>(new Split(info.AttrOr<int64_t>("axis", 0)));
    if (info.node().since_version >= 13) {
      if (const Tensor* split = info.ConstantInput(1)) {
        ASSIGN_OR_RETURN(k->split_, ReadInt64s(info, *split, "split"));
      }
    } else {
      k->split_ = info.AttrOr<std::vector<int64_t>>("split", {});
    }
    k->num_outputs_ = info.AttrOr<int64_t>("num_outputs", 0);
    RETURN_IF_ERROR(k->UploadConstantInputs(info, {1}));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    const int64_t rank = x->rank();
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, rank)) return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", rank));
    const int64_t extent = x->dims()[axis];
    const int outputs = ctx.OutputCount();
    std::vector<int64_t> sizes = split_;
    if (sizes.empty()) {
      // Equal parts; Split-18's num_outputs may leave a smaller last part.
      const int64_t parts = num_outputs_ > 0 ? num_outputs_ : outputs;
      const int64_t part = (extent + parts - 1) / parts;
      for (int64_t i = 0, left = extent; i < parts; ++i, left -= part) sizes.push_back(std::min(part, left));
      if (num_outputs_ == 0 && extent % parts != 0) {
        return ctx.Error(absl::StrCat("axis extent ", extent, " does not split into ", parts, " equal parts"));
      }
    }
    int64_t total = 0;
    for (int64_t s : sizes) total += s;
    if (static_cast<int>(sizes.size()) != outputs || total != extent) {
      return ctx.Error(absl::StrCat("split sizes (", sizes.size(), " summing to ", total, ") do not fit ", outputs,
                                    " outputs of axis extent ", extent));
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= x->dims()[d];
      if (d > axis) inner *= x->dims()[d];
    }
    const size_t elem = ElementSize(x->type());
    const size_t src_pitch = static_cast<size_t>(extent * inner) * elem;
    const char* src = static_cast<const char*>(x->raw());
    const cudaStream_t stream = CurrentCudaLane().stream;
    for (int o = 0; o < outputs; ++o) {
      Dims dims = x->dims();
      dims[axis] = sizes[o];
      const size_t width = static_cast<size_t>(sizes[o] * inner) * elem;
      if (ctx.OutputRequested(o)) {
        ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(o, dims, x->type()));
        RETURN_IF_ERROR(CheckLaunch(ctx, CopyBlock(y->mutable_raw(), width, src, src_pitch, width, outer, stream)));
      }
      src += width;
    }
    return absl::OkStatus();
  }

 private:
  explicit Split(int64_t axis) : axis_(axis) {}
  int64_t axis_;
  std::vector<int64_t> split_;  // empty: equal parts
  int64_t num_outputs_ = 0;
};

}  // namespace

absl::Status CheckConcatSplitNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (n.domain.empty() && n.op_type == "Split" && n.since_version >= 13) {
    return RequireConstantInput(info, 1, "split");
  }
  return absl::OkStatus();
}

void RegisterConcatSplitKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Concat").Since(4).Types("T", kCudaCopyTypes).Build(), Concat::Create);
  r.Register(KernelDefBuilder("Split").Since(2).Types("T", kCudaCopyTypes).Build(), Split::Create);
}

}  // namespace onyx::cuda_ops
