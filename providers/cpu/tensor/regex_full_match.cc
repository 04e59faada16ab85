// RegexFullMatch (opset 20): whether each whole string matches `pattern`, in
// RE2's syntax (no backreferences or lookaround, as ONNX specifies). The
// pattern compiles once, with the kernel; an invalid one fails the session.
#include <memory>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "re2/re2.h"

namespace onyx {
namespace {

class RegexFullMatch final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(std::string pattern, info.Attr<std::string>("pattern"));
    RE2::Options options;
    options.set_log_errors(false);
    auto re = std::make_unique<RE2>(pattern, options);
    if (!re->ok()) {
      return info.Error(absl::StrCat("pattern '", pattern, "' is not a valid RE2 expression: ", re->error()));
    }
    return std::unique_ptr<OpKernel>(new RegexFullMatch(std::move(re)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    if (x.type() != DataType::kString) {
      return ctx.Error(absl::StrCat("X must be string, received ", DataTypeName(x.type())));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, x.dims(), DataType::kBool));
    const std::string* in = x.data<std::string>();
    bool* out = y->mutable_data<bool>();
    for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = RE2::FullMatch(in[i], *re_);
    return absl::OkStatus();
  }

 private:
  explicit RegexFullMatch(std::unique_ptr<RE2> re) : re_(std::move(re)) {}

  std::unique_ptr<const RE2> re_;  // RE2 matching is thread-safe
};

}  // namespace

void RegisterRegexFullMatchKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("RegexFullMatch").Since(20).Build(), MakeFactory<RegexFullMatch>());
}

}  // namespace onyx
