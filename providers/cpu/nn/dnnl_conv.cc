#include "providers/cpu/nn/dnnl_conv.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "onyx/status_macros.h"
#include "providers/cpu/nn/dnnl_conv_geometry.h"
#include "providers/cpu/nn/dnnl_support.h"
#include "providers/cpu/nn/packed_weights.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {

using dnnl::memory;

struct DnnlConvolution::Compiled {
  dnnl::convolution_forward conv;
  memory::desc plain_src, plain_dst;  // the caller's row-major layouts
  memory::desc src, dst;              // the primitive's
  std::optional<dnnl::reorder> src_in, dst_in, dst_out;
  std::shared_ptr<const memory> weights;  // in the primitive's layout, shared (packed_weights.h)
  std::optional<memory> bias;
  memory::desc scratchpad;
  std::string implementation;
};

namespace {

memory::dims ToDnnl(absl::Span<const int64_t> dims) { return memory::dims(dims.begin(), dims.end()); }

absl::Status AppendActivation(const ConvActivation& a, dnnl::post_ops& ops) {
  using K = ConvActivation::Kind;
  switch (a.kind) {
    case K::kNone: return absl::OkStatus();
    case K::kRelu: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f); break;
    case K::kLeakyRelu: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, a.alpha, 0.f); break;
    case K::kClip: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, a.alpha, a.beta); break;
    case K::kSigmoid: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_logistic, 0.f, 0.f); break;
    // HardSigmoid(x) = max(0, min(1, alpha x + beta)) = clip(linear(x)).
    case K::kHardSigmoid:
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, a.alpha, a.beta);
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, 0.f, 1.f);
      break;
    // HardSwish(x) = x * HardSigmoid(x) with ONNX's fixed 1/6 and 1/2.
    case K::kHardSwish: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_hardswish, 0.f, 0.f); break;
    case K::kSwish: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, a.alpha, 0.f); break;
    case K::kTanh: ops.append_eltwise(1.f, dnnl::algorithm::eltwise_tanh, 0.f, 0.f); break;
  }
  return absl::OkStatus();
}

// oneDNN's logistic and swish post-ops cost 2-4x onyx's vectorised Sigmoid
// and Silu (bench/RESULTS.md): those run over the output after the
// primitive, still in cache for all but the largest outputs.
using ActivationFn = void (*)(const float*, float*, int64_t);
ActivationFn OwnActivation(const ConvActivation& a) {
  if (a.kind == ConvActivation::Kind::kSigmoid) return simd::Sigmoid;
  if (a.kind == ConvActivation::Kind::kSwish && a.alpha == 1.f) return simd::Silu;
  return nullptr;
}

}  // namespace

bool WinogradPays(const ConvShape& s, int64_t group, int threads) {
  const SpatialGeometry& g = s.geometry;
  if (group != 1 || g.kernel.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (g.kernel[i] != 3 || g.strides[i] != 1 || g.dilations[i] != 1) return false;
  }
  // Measured on AVX-512 (bench/RESULTS.md, "Winograd"): the transforms and
  // the reorders around them cost too much for few channels, and the
  // primitive's extra synchronisation too much for little work per thread.
  // The transformed weights take 4x the plain ones: a layer gets them only
  // when the 3 extra copies are at most 4x one image's input and output, so
  // wide layers on few pixels (a ResNet's 14x14 and 7x7 stages) keep their
  // memory and run directly.
  if (s.in_channels < kWinogradMinChannels || s.out_channels < kWinogradMinChannels) return false;
  const int64_t pixels = s.out_dims[2] * s.out_dims[3];
  const int64_t extra_weights = 3 * 9 * s.in_channels * s.out_channels;
  if (extra_weights > kWinogradMaxWeightsPerActivation * pixels * (s.in_channels + s.out_channels)) return false;
  const double macs = static_cast<double>(s.batch) * pixels * s.in_channels * s.out_channels * 9;
  return macs / std::max(threads, 1) >= kWinogradMinMacsPerThread;
}

absl::StatusOr<ConvActivation::Kind> ParseConvActivation(absl::string_view name) {
  using K = ConvActivation::Kind;
  if (name.empty()) return K::kNone;
  if (name == "Relu") return K::kRelu;
  if (name == "LeakyRelu") return K::kLeakyRelu;
  if (name == "Clip") return K::kClip;
  if (name == "Sigmoid") return K::kSigmoid;
  if (name == "HardSigmoid") return K::kHardSigmoid;
  if (name == "HardSwish") return K::kHardSwish;
  if (name == "Swish") return K::kSwish;
  if (name == "Tanh") return K::kTanh;
  return absl::InvalidArgumentError(absl::StrCat(
      "activation must be one of Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, Swish, Tanh; received '", name,
      "'"));
}

DnnlConvolution::DnnlConvolution(const ConvAttributes& attrs, int64_t group, const Tensor& weights, const Tensor* bias,
                                 const ConvPostOps& post_ops, ConvLayout layout)
    : attrs_(attrs), group_(group), weights_(weights), post_ops_(post_ops), layout_(layout) {
  if (bias != nullptr) bias_ = *bias;
}

DnnlConvolution::~DnnlConvolution() = default;

absl::StatusOr<std::unique_ptr<DnnlConvolution>> DnnlConvolution::Create(const ConvAttributes& attrs, int64_t group,
                                                                         const Tensor& weights, const Tensor* bias,
                                                                         const ConvPostOps& post_ops,
                                                                         const Dims& known_input, ConvLayout layout) {
  const size_t rank = weights.dims().size();
  if (weights.type() != DataType::kFloat || (bias != nullptr && bias->type() != DataType::kFloat)) {
    return absl::UnimplementedError("oneDNN convolution runs float weights only");
  }
  if (rank < 3 || rank > 5 || group < 1) {
    return absl::UnimplementedError(
        absl::StrCat("oneDNN convolution takes 1 to 3 spatial dims, weights have ", rank > 2 ? rank - 2 : 0));
  }
  if (bias != nullptr && bias->num_elements() != weights.dims()[0]) {
    return absl::InvalidArgumentError(
        absl::StrCat("bias has ", bias->num_elements(), " values, expected ", weights.dims()[0]));
  }
  if (layout == ConvLayout::kChannelsLast && rank != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("a channels-last convolution takes 2-D kernels, weights have ", rank - 2, " spatial dims"));
  }
  std::unique_ptr<DnnlConvolution> conv(new DnnlConvolution(attrs, group, weights, bias, post_ops, layout));
  if (!known_input.empty()) {
    // Compiling now moves the primitive's creation and the weights' reorder
    // to session creation; failure is UNIMPLEMENTED for the caller to fall
    // back on, or a shape error it reports itself on the first run.
    auto compiled = conv->CompiledFor(known_input);
    if (!compiled.ok() && absl::IsUnimplemented(compiled.status())) return compiled.status();
  }
  return conv;
}

absl::StatusOr<Dims> DnnlConvolution::ChannelsFirst(absl::Span<const int64_t> x) const {
  if (layout_ == ConvLayout::kChannelsFirst) return Dims(x.begin(), x.end());
  if (x.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("X must be [N, H, W, C], received ", DimsToString(Dims(x.begin(), x.end()))));
  }
  return Dims{x[0], x[3], x[1], x[2]};
}

absl::StatusOr<Dims> DnnlConvolution::OutputDims(absl::Span<const int64_t> x) const {
  ASSIGN_OR_RETURN(Dims logical, ChannelsFirst(x));
  ASSIGN_OR_RETURN(ConvShape shape, ResolveConvShape(attrs_, group_, logical, weights_.dims()));
  const Dims& y = shape.out_dims;
  if (layout_ == ConvLayout::kChannelsLast) return Dims{y[0], y[2], y[3], y[1]};
  return y;
}

absl::StatusOr<std::shared_ptr<const DnnlConvolution::Compiled>> DnnlConvolution::CompiledFor(
    absl::Span<const int64_t> x) const {
  // A primitive sizes its work split and scratchpad for the OpenMP thread
  // count it is created under and must not run with more, so the count is
  // part of the key and set before compiling.
  ApplyThreadSettings();
  std::pair<Dims, int> key(Dims(x.begin(), x.end()), IntraOpThreads());
  {
    absl::MutexLock lock(&mu_);
    auto it = compiled_.find(key);
    if (it != compiled_.end()) return it->second;
  }
  // Compiled outside the lock: concurrent first runs of one shape may both
  // compile; the first stored wins and the other is dropped.
  ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> compiled, Compile(x));
  absl::MutexLock lock(&mu_);
  return compiled_.emplace(std::move(key), std::move(compiled)).first->second;
}

absl::StatusOr<std::string> DnnlConvolution::ImplementationFor(absl::Span<const int64_t> x) const {
  ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> compiled, CompiledFor(x));
  return compiled->implementation;
}

absl::StatusOr<std::shared_ptr<const DnnlConvolution::Compiled>> DnnlConvolution::Compile(
    absl::Span<const int64_t> user_x) const {
  ASSIGN_OR_RETURN(Dims x, ChannelsFirst(user_x));
  ASSIGN_OR_RETURN(ConvShape s, ResolveConvShape(attrs_, group_, x, weights_.dims()));
  const size_t rank = s.geometry.in.size() + 2;
  const bool grouped = group_ > 1;
  const DnnlConvGeometry g = DnnlGeometryOf(s, group_);
  auto compiled = std::make_shared<Compiled>();
  RETURN_IF_ERROR(DnnlGuarded("convolution for this shape", [&]() -> absl::Status {
    const auto f32 = memory::data_type::f32;
    const bool last = layout_ == ConvLayout::kChannelsLast;
    const memory::format_tag user_tag = last ? memory::format_tag::nhwc : DnnlPlainActivationTag(rank);
    compiled->plain_src = memory::desc(ToDnnl(x), f32, user_tag);
    compiled->plain_dst = memory::desc(ToDnnl(s.out_dims), f32, user_tag);
    const memory::desc plain_w(g.weights, f32, DnnlPlainWeightsTag(rank, grouped));
    const memory::desc any_src(ToDnnl(x), f32, memory::format_tag::any);
    const memory::desc any_dst(ToDnnl(s.out_dims), f32, memory::format_tag::any);
    const memory::desc any_w(g.weights, f32, memory::format_tag::any);
    const bool has_bias = bias_.type() == DataType::kFloat;
    const memory::desc bias_md = has_bias ? memory::desc({s.out_channels}, f32, memory::format_tag::x) : memory::desc();
    dnnl::post_ops ops;
    if (post_ops_.residual) ops.append_sum(1.f);
    if (OwnActivation(post_ops_.activation) == nullptr) RETURN_IF_ERROR(AppendActivation(post_ops_.activation, ops));
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto primitive_for = [&](const memory::desc& src, const memory::desc& dst,
                             dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct) {
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, src, any_w, bias_md, dst,
                                           g.strides, g.dilations, g.pad_l, g.pad_r);
      return dnnl::convolution_forward::primitive_desc(desc, attr, DnnlCpuEngine());
    };
    // Winograd, where it pays and this CPU has an implementation (AVX-512),
    // runs in its own blocked layout between reorders; otherwise channels
    // last asks for the caller's layout itself, and only when no
    // implementation takes it does the primitive choose and get reorders.
    std::optional<dnnl::convolution_forward::primitive_desc> chosen;
    auto try_primitive = [&](const memory::desc& src, const memory::desc& dst, dnnl::algorithm algorithm) {
      try {
        chosen = primitive_for(src, dst, algorithm);
      } catch (const dnnl::error&) {
        chosen.reset();
      }
    };
    if (WinogradPays(s, group_, IntraOpThreads())) {
      try_primitive(any_src, any_dst, dnnl::algorithm::convolution_winograd);
    }
    if (!chosen && last) try_primitive(compiled->plain_src, compiled->plain_dst, dnnl::algorithm::convolution_direct);
    dnnl::convolution_forward::primitive_desc pd = chosen ? *chosen : primitive_for(any_src, any_dst);
    compiled->conv = dnnl::convolution_forward(pd);
    compiled->src = pd.src_desc();
    compiled->dst = pd.dst_desc();
    compiled->scratchpad = pd.scratchpad_desc();
    compiled->implementation = pd.impl_info_str();
    if (compiled->src != compiled->plain_src) {
      compiled->src_in = dnnl::reorder(
          dnnl::reorder::primitive_desc(DnnlCpuEngine(), compiled->plain_src, DnnlCpuEngine(), compiled->src));
    }
    if (compiled->dst != compiled->plain_dst) {
      compiled->dst_out = dnnl::reorder(
          dnnl::reorder::primitive_desc(DnnlCpuEngine(), compiled->dst, DnnlCpuEngine(), compiled->plain_dst));
      if (post_ops_.residual) {
        compiled->dst_in = dnnl::reorder(
            dnnl::reorder::primitive_desc(DnnlCpuEngine(), compiled->plain_dst, DnnlCpuEngine(), compiled->dst));
      }
    }
    // The weights, once, in the primitive's layout (its own allocation).
    ApplyThreadSettings();
    ASSIGN_OR_RETURN(compiled->weights, PackedWeights(weights_, plain_w, pd.weights_desc()));
    if (has_bias) compiled->bias = memory(bias_md, DnnlCpuEngine(), const_cast<void*>(bias_.raw()));
    DnnlThreadStream().wait();
    return absl::OkStatus();
  }));
  return std::shared_ptr<const Compiled>(std::move(compiled));
}

absl::Status DnnlConvolution::Run(const Tensor& x, const Tensor* z, Tensor& y) const {
  if (x.type() != DataType::kFloat || y.type() != DataType::kFloat) {
    return absl::InvalidArgumentError(absl::StrCat("oneDNN convolution takes float X and Y, received ",
                                                   DataTypeName(x.type()), " and ", DataTypeName(y.type())));
  }
  if (post_ops_.residual && (z == nullptr || z->dims() != y.dims() || z->type() != DataType::kFloat)) {
    return absl::InvalidArgumentError(absl::StrCat("residual Z ", z ? DimsToString(z->dims()) : "(missing)",
                                                   " does not match the output ", DimsToString(y.dims())));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(x.dims()));
  if (NumElements(y.dims()) != static_cast<int64_t>(c->plain_dst.get_size() / sizeof(float))) {
    return absl::InvalidArgumentError(
        absl::StrCat("output ", DimsToString(y.dims()), " does not fit X ", DimsToString(x.dims())));
  }
  return DnnlGuarded("convolution run", [&]() -> absl::Status {
    ApplyThreadSettings();
    dnnl::stream& stream = DnnlThreadStream();
    const dnnl::engine& engine = DnnlCpuEngine();
    memory user_src(c->plain_src, engine, const_cast<void*>(x.raw()));
    memory user_dst(c->plain_dst, engine, y.mutable_raw());
    memory src = user_src, dst = user_dst;
    if (c->src_in) {
      void* buffer = KernelScratchBytes(kScratchConvSource, c->src.get_size());
      if (buffer == nullptr) return absl::ResourceExhaustedError("no memory for the convolution's input reorder");
      src = memory(c->src, engine, buffer);
      c->src_in->execute(stream, user_src, src);
    }
    if (c->dst_out) {
      void* buffer = KernelScratchBytes(kScratchConvResult, c->dst.get_size());
      if (buffer == nullptr) return absl::ResourceExhaustedError("no memory for the convolution's output reorder");
      dst = memory(c->dst, engine, buffer);
    }
    if (post_ops_.residual) {
      memory user_z(c->plain_dst, engine, const_cast<void*>(z->raw()));
      if (c->dst_in) {
        c->dst_in->execute(stream, user_z, dst);
      } else if (z->raw() != y.raw()) {
        // Z lives on (it could not lend Y its buffer): copy it in, on every
        // intra-op thread, since a large one alone costs as much as the
        // convolution's share of the memory traffic.
        const char* from = static_cast<const char*>(z->raw());
        char* to = static_cast<char*>(y.mutable_raw());
        ParallelFor(static_cast<int64_t>(y.byte_size()), int64_t{1} << 18,
                    [&](int64_t begin, int64_t end) { std::memcpy(to + begin, from + begin, end - begin); });
      }
    }
    void* pad = KernelScratchBytes(kScratchPrimitive, c->scratchpad.get_size());
    if (pad == nullptr) return absl::ResourceExhaustedError("no memory for the convolution's scratchpad");
    memory scratchpad(c->scratchpad, engine, pad);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, *c->weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad}};
    if (c->bias) args.emplace(DNNL_ARG_BIAS, *c->bias);
    c->conv.execute(stream, args);
    if (c->dst_out) c->dst_out->execute(stream, dst, user_dst);
    stream.wait();
    if (auto activation = OwnActivation(post_ops_.activation)) {
      float* out = y.mutable_data<float>();
      ParallelFor(y.num_elements(), int64_t{1} << 14,
                  [&](int64_t begin, int64_t end) { activation(out + begin, out + begin, end - begin); });
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::unique_ptr<DnnlConvolution>> CreateDnnlConvolutionFor(const OpKernelInfo& info,
                                                                          const ConvPostOps& post_ops,
                                                                          ConvLayout layout) {
  const Tensor* w = info.ConstantInput(1);
  const Tensor* b = info.HasInput(2) ? info.ConstantInput(2) : nullptr;
  if (w == nullptr || info.InputType(0) != DataType::kFloat || w->type() != DataType::kFloat) return nullptr;
  if (info.HasInput(2) && b == nullptr) return nullptr;  // a bias computed at run time
  Dims known;
  if (const ValueInfo* x = info.InputInfo(0); x != nullptr && x->has_shape) {
    known.assign(x->dims.begin(), x->dims.end());
    for (int64_t d : known) {
      if (d < 0) {
        known.clear();
        break;
      }
    }
  }
  auto conv = DnnlConvolution::Create(ConvAttributes::FromInfo(info), info.AttrOr<int64_t>("group", 1), *w, b, post_ops,
                                      known, layout);
  if (!conv.ok() && absl::IsUnimplemented(conv.status())) return nullptr;
  if (!conv.ok()) return info.Error(conv.status().message());
  return conv;
}

}  // namespace onyx
