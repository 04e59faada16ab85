#include "providers/cpu/nn/dnnl_conv_integer.h"

#include <optional>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/dnnl_conv_geometry.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {

using dnnl::memory;

struct DnnlIntegerConvolution::Compiled {
  dnnl::convolution_forward conv;
  memory::desc user_src, user_dst, src, dst, scratchpad;
  std::optional<dnnl::reorder> src_in, dst_out;
  memory weights;
};

DnnlIntegerConvolution::DnnlIntegerConvolution(const ConvAttributes& attrs, int64_t group, Tensor weights)
    : attrs_(attrs), group_(group), weights_(std::move(weights)) {}

DnnlIntegerConvolution::~DnnlIntegerConvolution() = default;

absl::StatusOr<std::unique_ptr<DnnlIntegerConvolution>> DnnlIntegerConvolution::Create(
    const ConvAttributes& attrs, int64_t group, const Tensor& weights, const Tensor* weights_zero_point) {
  const size_t rank = weights.dims().size();
  if (rank < 3 || rank > 5 || group < 1) return absl::UnimplementedError("oneDNN takes 1 to 3 spatial dims");
  if (weights.type() != DataType::kInt8 && weights.type() != DataType::kUint8) {
    return absl::UnimplementedError("weights must be int8 or uint8");
  }
  // The zero point every channel must have for oneDNN's signed weights.
  const int64_t needed = weights.type() == DataType::kInt8 ? 0 : 128;
  if (weights_zero_point != nullptr) {
    for (int64_t i = 0; i < weights_zero_point->num_elements(); ++i) {
      if (ScalarAsInt64(*weights_zero_point, i) != needed) {
        return absl::UnimplementedError(absl::StrCat("oneDNN takes weights with zero point ", needed));
      }
    }
  } else if (needed != 0) {
    return absl::UnimplementedError("uint8 weights without a zero point of 128");
  }
  Tensor signed_weights = weights;
  if (weights.type() == DataType::kUint8) {
    signed_weights = Tensor::Allocate(DataType::kInt8, weights.dims());
    for (int64_t i = 0; i < weights.num_elements(); ++i) {
      signed_weights.mutable_data<int8_t>()[i] = static_cast<int8_t>(weights.data<uint8_t>()[i] - 128);
    }
  }
  return std::unique_ptr<DnnlIntegerConvolution>(new DnnlIntegerConvolution(attrs, group, std::move(signed_weights)));
}

absl::StatusOr<Dims> DnnlIntegerConvolution::OutputDims(absl::Span<const int64_t> x) const {
  ASSIGN_OR_RETURN(ConvShape shape, ResolveConvShape(attrs_, group_, x, weights_.dims()));
  return shape.out_dims;
}

absl::StatusOr<std::shared_ptr<const DnnlIntegerConvolution::Compiled>> DnnlIntegerConvolution::CompiledFor(
    const Tensor& x) const {
  ApplyThreadSettings();
  std::tuple<Dims, DataType, int> key(x.dims(), x.type(), IntraOpThreads());
  {
    absl::MutexLock lock(&mu_);
    auto it = compiled_.find(key);
    if (it != compiled_.end()) return it->second;
  }
  ASSIGN_OR_RETURN(ConvShape s, ResolveConvShape(attrs_, group_, x.dims(), weights_.dims()));
  const size_t rank = s.geometry.in.size() + 2;
  const DnnlConvGeometry g = DnnlGeometryOf(s, group_);
  auto c = std::make_shared<Compiled>();
  RETURN_IF_ERROR(DnnlGuarded("int8 convolution for this shape", [&]() -> absl::Status {
    const auto src_type = x.type() == DataType::kUint8 ? memory::data_type::u8 : memory::data_type::s8;
    const auto s32 = memory::data_type::s32, s8 = memory::data_type::s8;
    const memory::dims x_dims(x.dims().begin(), x.dims().end()), y_dims(s.out_dims.begin(), s.out_dims.end());
    c->user_src = memory::desc(x_dims, src_type, DnnlPlainActivationTag(rank));
    c->user_dst = memory::desc(y_dims, s32, DnnlPlainActivationTag(rank));
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc(x_dims, src_type, memory::format_tag::any), memory::desc(g.weights, s8, memory::format_tag::any),
        memory::desc(y_dims, s32, memory::format_tag::any), g.strides, g.dilations, g.pad_l, g.pad_r);
    dnnl::primitive_attr attr;
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, DnnlCpuEngine());
    c->conv = dnnl::convolution_forward(pd);
    c->src = pd.src_desc();
    c->dst = pd.dst_desc();
    c->scratchpad = pd.scratchpad_desc();
    if (c->src != c->user_src) {
      c->src_in = dnnl::reorder(dnnl::reorder::primitive_desc(DnnlCpuEngine(), c->user_src, DnnlCpuEngine(), c->src));
    }
    if (c->dst != c->user_dst) {
      c->dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(DnnlCpuEngine(), c->dst, DnnlCpuEngine(), c->user_dst));
    }
    memory plain(memory::desc(g.weights, s8, DnnlPlainWeightsTag(rank, group_ > 1)), DnnlCpuEngine(),
                 const_cast<void*>(weights_.raw()));
    c->weights = memory(pd.weights_desc(), DnnlCpuEngine());
    dnnl::reorder(plain, c->weights).execute(DnnlThreadStream(), plain, c->weights);
    DnnlThreadStream().wait();
    return absl::OkStatus();
  }));
  absl::MutexLock lock(&mu_);
  return compiled_.emplace(std::move(key), std::move(c)).first->second;
}

absl::Status DnnlIntegerConvolution::Run(const Tensor& x, int32_t x_zero_point, Tensor& y) const {
  if ((x.type() != DataType::kUint8 && x.type() != DataType::kInt8) || y.type() != DataType::kInt32) {
    return absl::InvalidArgumentError(absl::StrCat("int8 convolution takes 8-bit x and int32 y, received ",
                                                   DataTypeName(x.type()), " and ", DataTypeName(y.type())));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(x));
  if (y.byte_size() != c->user_dst.get_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("output ", DimsToString(y.dims()), " does not fit x ", DimsToString(x.dims())));
  }
  return DnnlGuarded("int8 convolution run", [&]() -> absl::Status {
    ApplyThreadSettings();
    const dnnl::engine& engine = DnnlCpuEngine();
    dnnl::stream& stream = DnnlThreadStream();
    memory src(c->user_src, engine, const_cast<void*>(x.raw()));
    memory dst(c->user_dst, engine, y.mutable_raw());
    memory user_dst = dst;
    if (c->src_in) {
      void* buffer = KernelScratchBytes(kScratchConvSource, c->src.get_size());
      if (buffer == nullptr) return absl::ResourceExhaustedError("no memory for the convolution's input reorder");
      memory reordered(c->src, engine, buffer);
      c->src_in->execute(stream, src, reordered);
      src = reordered;
    }
    if (c->dst_out) {
      void* buffer = KernelScratchBytes(kScratchConvResult, c->dst.get_size());
      if (buffer == nullptr) return absl::ResourceExhaustedError("no memory for the convolution's output reorder");
      dst = memory(c->dst, engine, buffer);
    }
    void* pad = KernelScratchBytes(kScratchPrimitive, c->scratchpad.get_size());
    if (pad == nullptr && c->scratchpad.get_size() > 0) {
      return absl::ResourceExhaustedError("no memory for the convolution's scratchpad");
    }
    int32_t zp = x_zero_point;
    memory zp_mem(memory::desc({1}, memory::data_type::s32, memory::format_tag::x), engine, &zp);
    c->conv.execute(stream, {{DNNL_ARG_SRC, src},
                             {DNNL_ARG_WEIGHTS, c->weights},
                             {DNNL_ARG_DST, dst},
                             {DNNL_ARG_SCRATCHPAD, memory(c->scratchpad, engine, pad)},
                             {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_mem}});
    if (c->dst_out) c->dst_out->execute(stream, dst, user_dst);
    stream.wait();
    return absl::OkStatus();
  });
}

}  // namespace onyx
