// com.onyx ConcatScaleShift(scale, shift, X1, ..., Xk), float:
// act(Concat(X1..Xk, last axis) * scale + shift), scale and shift one value
// per channel of the concatenation (C values, any shape), act absent or
// "Relu". DenseNet's dense layers concatenate every earlier feature map and
// normalise the result (BatchNorm + ReLU, a per-channel affine channels-last):
// one pass writes the normalised concatenation where the Concat's copy and the
// normalisation were two passes over the largest tensors of the network.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

class ConcatScaleShift final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const std::string activation = info.AttrOr<std::string>("activation", "");
    if (!activation.empty() && activation != "Relu") {
      return info.Error("attribute 'activation' must be absent or \"Relu\", received \"" + activation + "\"");
    }
    return std::unique_ptr<OpKernel>(new ConcatScaleShift(activation == "Relu"));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* scale, RequireInput(ctx, 0, "scale"));
    ASSIGN_OR_RETURN(const Tensor* shift, RequireInput(ctx, 1, "shift"));
    std::vector<const Tensor*> inputs;
    for (int i = 2; i < ctx.InputCount(); ++i) {
      ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, i, absl::StrCat("X", i - 1)));
      inputs.push_back(x);
    }
    if (inputs.empty()) return ctx.Error("no input to concatenate (expected scale, shift, X1, ...)");
    const Tensor& first = *inputs[0];
    if (first.rank() < 1) return ctx.Error("X1 must have rank >= 1, received a scalar");
    Dims out_dims = first.dims();
    out_dims.back() = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = *inputs[i];
      bool match = t.type() == DataType::kFloat && t.rank() == first.rank();
      for (int64_t a = 0; match && a + 1 < t.rank(); ++a) match = t.dims()[a] == first.dims()[a];
      if (!match) {
        return ctx.Error(absl::StrCat("X", i + 1, " (", DataTypeName(t.type()), " ", DimsToString(t.dims()),
                                      ") must be float and match X1 ", DimsToString(first.dims()),
                                      " outside the last axis"));
      }
      out_dims.back() += t.dims().back();
    }
    const int64_t channels = out_dims.back();
    for (const Tensor* p : {scale, shift}) {
      if (p->type() != DataType::kFloat || p->num_elements() != channels) {
        return ctx.Error(absl::StrCat(p == scale ? "scale" : "shift", " must hold ", channels,
                                      " float values (one per channel of the concatenation), received ",
                                      DataTypeName(p->type()), " ", DimsToString(p->dims())));
      }
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.OutputForOverwrite(0, out_dims, DataType::kFloat));
    if (y->num_elements() == 0) return absl::OkStatus();
    const int64_t rows = y->num_elements() / channels;
    std::vector<int64_t> offsets(inputs.size() + 1, 0);
    for (size_t i = 0; i < inputs.size(); ++i) offsets[i + 1] = offsets[i] + inputs[i]->dims().back();
    const float* s = scale->data<float>();
    const float* b = shift->data<float>();
    float* py = y->mutable_data<float>();
    // Blocks of rows per thread (those a parallel producer wrote on the same
    // core), input by input, each source read front to back.
    ParallelFor(rows, std::max<int64_t>(1, 32768 / channels), [&](int64_t begin, int64_t end) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        const int64_t run = offsets[i + 1] - offsets[i], at = offsets[i];
        simd::ScaleShiftRows(inputs[i]->data<float>() + begin * run, end - begin, run, s + at, b + at, relu_,
                             py + begin * channels + at, channels);
      }
    });
    return absl::OkStatus();
  }

 private:
  explicit ConcatScaleShift(bool relu) : relu_(relu) {}
  bool relu_;
};

}  // namespace

void RegisterConcatScaleShiftKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("ConcatScaleShift").Domain(kOnyxDomain).Build(), MakeFactory<ConcatScaleShift>());
}

}  // namespace onyx
