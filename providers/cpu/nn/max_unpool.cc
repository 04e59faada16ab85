// MaxUnpool: scatters X into a zero tensor at the flat positions given by
// MaxPool's Indices. The output shape is the output_shape input when given,
// else (in - 1) * stride + kernel - pad_begin - pad_end per spatial dim.
#include <cstring>

#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_attributes.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

class MaxUnpool final : public OpKernel {
 public:
  explicit MaxUnpool(const OpKernelInfo& info) : attrs_(ConvAttributes::FromInfo(info)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* indices, RequireInput(ctx, 1, "I"));
    if (x->rank() < 3) return ctx.Error("X must have rank >= 3, received " + DimsToString(x->dims()));
    if (indices->dims() != x->dims() || indices->type() != DataType::kInt64) {
      return ctx.Error(absl::StrCat("I must be int64 of X's shape ", DimsToString(x->dims()), ", received ",
                                    DataTypeName(indices->type()), " ", DimsToString(indices->dims())));
    }
    const size_t rank = x->rank() - 2;
    if (attrs_.kernel_shape.size() != rank || (!attrs_.strides.empty() && attrs_.strides.size() != rank) ||
        (!attrs_.pads.empty() && attrs_.pads.size() != 2 * rank)) {
      return ctx.Error(absl::StrCat("attributes kernel_shape, strides and pads have ", attrs_.kernel_shape.size(), ", ",
                                    attrs_.strides.size(), " and ", attrs_.pads.size(), " values; expected ", rank,
                                    ", ", rank, " and ", 2 * rank));
    }
    // Indices address the default output shape; an explicit output_shape
    // places each element at the same coordinates in the larger tensor.
    Dims default_dims = {x->dims()[0], x->dims()[1]};
    for (size_t i = 0; i < rank; ++i) {
      const int64_t stride = attrs_.strides.empty() ? 1 : attrs_.strides[i];
      const int64_t begin = attrs_.pads.empty() ? 0 : attrs_.pads[i];
      const int64_t end = attrs_.pads.empty() ? 0 : attrs_.pads[i + rank];
      default_dims.push_back((x->dims()[i + 2] - 1) * stride + attrs_.kernel_shape[i] - begin - end);
    }
    Dims out_dims = default_dims;
    if (const Tensor* shape = ctx.Input(2)) {
      if (shape->type() != DataType::kInt64 || shape->num_elements() != x->rank()) {
        return ctx.Error(absl::StrCat("output_shape must be int64 with ", x->rank(), " values, received ",
                                      DimsToString(shape->dims())));
      }
      out_dims.assign(shape->data<int64_t>(), shape->data<int64_t>() + x->rank());
      for (size_t d = 0; d < out_dims.size(); ++d) {
        if (out_dims[d] < default_dims[d]) {
          return ctx.Error(absl::StrCat("output_shape ", DimsToString(out_dims), " is smaller than the pooled shape ",
                                        DimsToString(default_dims)));
        }
      }
    }
    for (int64_t d : out_dims) {
      if (d < 0) return ctx.Error("computed output shape is negative: " + DimsToString(out_dims));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x->type()));
    std::memset(y->mutable_raw(), 0, y->byte_size());
    const size_t elem = ElementSize(x->type());
    const int64_t total = NumElements(default_dims);
    const int64_t* idx = indices->data<int64_t>();
    const char* src = static_cast<const char*>(x->raw());
    char* dst = static_cast<char*>(y->mutable_raw());
    const bool remap = out_dims != default_dims;
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      if (idx[i] < 0 || idx[i] >= total) {
        return ctx.Error(absl::StrCat("index ", idx[i], " at position ", i, " is outside the output of ", total, " elements"));
      }
      int64_t at = idx[i];
      if (remap) {
        int64_t rem = idx[i], stride = 1;
        at = 0;
        for (int64_t d = static_cast<int64_t>(out_dims.size()) - 1; d >= 0; --d) {
          at += (rem % default_dims[d]) * stride;
          rem /= default_dims[d];
          stride *= out_dims[d];
        }
      }
      std::memcpy(dst + at * elem, src + i * elem, elem);
    }
    return absl::OkStatus();
  }

 private:
  ConvAttributes attrs_;
};

}  // namespace

void RegisterMaxUnpoolKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("MaxUnpool").Since(9).Types("T1", kFloatTypes).Build(), MakeFactory<MaxUnpool>());
}

}  // namespace onyx
