// com.onyx NhwcConvTranspose(X, W, B?): ConvTranspose on channels-last X and
// Y ([N, H, W, C] -> [N, OH, OW, M]), 2-D, with explicit pads (auto_pad
// NOTSET or VALID), no output_padding and no output_shape; W stays ONNX's
// [C, M/group, kH, kW]. oneDNN's deconvolution runs it: W is reordered once
// per input shape into the primitive's layout, the bias is an input of the
// primitive, and the activations are never reordered.
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/nhwc/nhwc_kernels.h"
#include "providers/cpu/nn/dnnl_support.h"
#include "providers/cpu/nn/packed_weights.h"

namespace onyx {
namespace {

using dnnl::memory;

class NhwcConvTranspose final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr || w->type() != DataType::kFloat || w->rank() != 4) {
      return info.Error("W must be a constant float [C, M/group, kH, kW] initializer");
    }
    const Tensor* b = info.HasInput(2) ? info.ConstantInput(2) : nullptr;
    if (info.HasInput(2) && b == nullptr) return info.Error("B must be a constant initializer");
    const int64_t group = info.AttrOr<int64_t>("group", 1);
    if (group < 1 || w->dims()[0] % group != 0) {
      return info.Error(absl::StrCat("group ", group, " does not divide W's ", w->dims()[0], " input channels"));
    }
    if (b != nullptr && b->num_elements() != w->dims()[1] * group) {
      return info.Error(absl::StrCat("bias has ", b->num_elements(), " values, expected ", w->dims()[1] * group));
    }
    const std::string auto_pad = info.AttrOr<std::string>("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") return info.Error("auto_pad must be NOTSET or VALID");
    for (int64_t p : info.AttrOr<std::vector<int64_t>>("output_padding", {})) {
      if (p != 0) return info.Error("output_padding must be 0");
    }
    if (info.HasAttr("output_shape")) return info.Error("output_shape is not run channels-last");
    auto fill = [&](const char* name, size_t n, int64_t value) {
      std::vector<int64_t> v = info.AttrOr<std::vector<int64_t>>(name, {});
      if (v.empty()) v.assign(n, value);
      return v;
    };
    auto kernel = std::unique_ptr<NhwcConvTranspose>(new NhwcConvTranspose(*w, b, group));
    kernel->strides_ = fill("strides", 2, 1);
    kernel->dilations_ = fill("dilations", 2, 1);
    kernel->pads_ = auto_pad == "VALID" ? std::vector<int64_t>(4, 0) : fill("pads", 4, 0);
    if (kernel->strides_.size() != 2 || kernel->dilations_.size() != 2 || kernel->pads_.size() != 4) {
      return info.Error("strides, dilations and pads must describe 2 spatial dims");
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, "NhwcConvTranspose"));
    const Tensor& x = *ctx.Input(0);
    const Dims& d = x.dims();
    if (x.rank() != 4 || d[3] != weights_.dims()[0]) {
      return ctx.Error(absl::StrCat("X must be [N, H, W, ", weights_.dims()[0], "], received ", DimsToString(d)));
    }
    Dims out = {d[0], 0, 0, weights_.dims()[1] * group_};
    for (int i = 0; i < 2; ++i) {
      const int64_t k = weights_.dims()[2 + i];
      out[1 + i] = strides_[i] * (d[1 + i] - 1) + (k - 1) * dilations_[i] + 1 - pads_[i] - pads_[i + 2];
      if (out[1 + i] <= 0) return ctx.Error(absl::StrCat("output dimension ", i, " would be ", out[1 + i]));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out, DataType::kFloat));
    auto compiled = CompiledFor(d, out);
    if (!compiled.ok()) return ctx.Error(compiled.status().message());
    const Compiled& c = **compiled;
    absl::Status status = DnnlGuarded("deconvolution run", [&]() -> absl::Status {
      ApplyThreadSettings();
      const dnnl::engine& engine = DnnlCpuEngine();
      void* pad = KernelScratchBytes(kScratchPrimitive, c.scratchpad.get_size());
      if (pad == nullptr && c.scratchpad.get_size() > 0) {
        return absl::ResourceExhaustedError("no memory for the deconvolution's scratchpad");
      }
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(c.src, engine, const_cast<void*>(x.raw()))},
                                              {DNNL_ARG_WEIGHTS, *c.weights},
                                              {DNNL_ARG_DST, memory(c.dst, engine, y->mutable_raw())},
                                              {DNNL_ARG_SCRATCHPAD, memory(c.scratchpad, engine, pad)}};
      if (c.bias) args.emplace(DNNL_ARG_BIAS, *c.bias);
      dnnl::stream& stream = DnnlThreadStream();
      c.deconv.execute(stream, args);
      stream.wait();
      return absl::OkStatus();
    });
    return status.ok() ? status : ctx.Error(status.message());
  }

 private:
  struct Compiled {
    dnnl::deconvolution_forward deconv;
    memory::desc src, dst, scratchpad;
    std::shared_ptr<const memory> weights;  // shared (packed_weights.h)
    std::optional<memory> bias;
  };

  NhwcConvTranspose(const Tensor& w, const Tensor* b, int64_t group) : weights_(w), group_(group) {
    if (b != nullptr) bias_ = *b;
  }

  // The primitive for this input shape and thread count, compiled once.
  absl::StatusOr<std::shared_ptr<const Compiled>> CompiledFor(const Dims& d, const Dims& out) const {
    ApplyThreadSettings();
    std::pair<Dims, int> key(d, IntraOpThreads());
    {
      absl::MutexLock lock(&mu_);
      auto it = compiled_.find(key);
      if (it != compiled_.end()) return it->second;
    }
    auto c = std::make_shared<Compiled>();
    RETURN_IF_ERROR(DnnlGuarded("deconvolution for this shape", [&]() -> absl::Status {
      const auto f32 = memory::data_type::f32;
      const Dims& wd = weights_.dims();  // [C, M/g, kH, kW]
      const int64_t in_c = wd[0], out_c = wd[1] * group_;
      c->src = memory::desc({d[0], in_c, d[1], d[2]}, f32, memory::format_tag::nhwc);
      c->dst = memory::desc({out[0], out_c, out[1], out[2]}, f32, memory::format_tag::nhwc);
      // ONNX's [C, M/g, kH, kW] is oneDNN's iohw (giohw with groups).
      const memory::desc plain_w =
          group_ == 1 ? memory::desc({out_c, in_c, wd[2], wd[3]}, f32, memory::format_tag::iohw)
                      : memory::desc({group_, wd[1], in_c / group_, wd[2], wd[3]}, f32, memory::format_tag::giohw);
      const memory::desc any_w(plain_w.dims(), f32, memory::format_tag::any);
      const bool has_bias = bias_.type() == DataType::kFloat;
      const memory::desc bias_md = has_bias ? memory::desc({out_c}, f32, memory::format_tag::x) : memory::desc();
      dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                             c->src, any_w, bias_md, c->dst, {strides_[0], strides_[1]},
                                             {dilations_[0] - 1, dilations_[1] - 1}, {pads_[0], pads_[1]},
                                             {pads_[2], pads_[3]});
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::deconvolution_forward::primitive_desc pd(desc, attr, DnnlCpuEngine());
      c->deconv = dnnl::deconvolution_forward(pd);
      c->scratchpad = pd.scratchpad_desc();
      ASSIGN_OR_RETURN(c->weights, PackedWeights(weights_, plain_w, pd.weights_desc()));
      if (has_bias) c->bias = memory(bias_md, DnnlCpuEngine(), const_cast<void*>(bias_.raw()));
      return absl::OkStatus();
    }));
    absl::MutexLock lock(&mu_);
    return compiled_.emplace(std::move(key), std::move(c)).first->second;
  }

  Tensor weights_, bias_;
  int64_t group_;
  std::vector<int64_t> strides_, dilations_, pads_;
  mutable absl::Mutex mu_;
  // By (input dims, intra-op threads), as for the convolution.
  mutable std::map<std::pair<Dims, int>, std::shared_ptr<const Compiled>> compiled_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void RegisterNhwcConvTransposeKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("NhwcConvTranspose").Domain(kOnyxDomain).Build(), MakeFactory<NhwcConvTranspose>());
}

}  // namespace onyx
