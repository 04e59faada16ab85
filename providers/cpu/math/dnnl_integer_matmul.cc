#include "providers/cpu/math/dnnl_integer_matmul.h"

#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/dnnl_support.h"
#include "providers/cpu/nn/packed_weights.h"

namespace onyx {

using dnnl::memory;

struct DnnlIntegerMatMul::Compiled {
  dnnl::matmul matmul;
  memory::desc a, y, scratchpad;
  std::shared_ptr<const memory> weights;  // shared (packed_weights.h)
};

DnnlIntegerMatMul::DnnlIntegerMatMul(Tensor b) : b_(std::move(b)) {}

DnnlIntegerMatMul::~DnnlIntegerMatMul() = default;

absl::StatusOr<std::unique_ptr<DnnlIntegerMatMul>> DnnlIntegerMatMul::Create(const Tensor& b,
                                                                             const Tensor* b_zero_point) {
  if (b.rank() != 2 || (b.type() != DataType::kInt8 && b.type() != DataType::kUint8)) {
    return absl::UnimplementedError("oneDNN's int8 matmul takes 2-D int8 or uint8 weights");
  }
  const int64_t needed = b.type() == DataType::kInt8 ? 0 : 128;
  if (b_zero_point != nullptr) {
    for (int64_t i = 0; i < b_zero_point->num_elements(); ++i) {
      if (ScalarAsInt64(*b_zero_point, i) != needed) {
        return absl::UnimplementedError(absl::StrCat("oneDNN takes weights with zero point ", needed));
      }
    }
  } else if (needed != 0) {
    return absl::UnimplementedError("uint8 weights without a zero point of 128");
  }
  Tensor signed_b = b;
  if (b.type() == DataType::kUint8) {
    signed_b = Tensor::Allocate(DataType::kInt8, b.dims());
    for (int64_t i = 0; i < b.num_elements(); ++i) {
      signed_b.mutable_data<int8_t>()[i] = static_cast<int8_t>(b.data<uint8_t>()[i] - 128);
    }
  }
  return std::unique_ptr<DnnlIntegerMatMul>(new DnnlIntegerMatMul(std::move(signed_b)));
}

absl::StatusOr<std::shared_ptr<const DnnlIntegerMatMul::Compiled>> DnnlIntegerMatMul::CompiledFor(int64_t rows,
                                                                                                  DataType a_type,
                                                                                                  Form form) const {
  // A primitive must not run with more threads than it was created for.
  ApplyThreadSettings();
  std::tuple<int64_t, DataType, int, int> key(rows, a_type, IntraOpThreads(), form.Key());
  {
    absl::MutexLock lock(&mu_);
    auto it = compiled_.find(key);
    if (it != compiled_.end()) return it->second;
  }
  auto compiled = std::make_shared<Compiled>();
  dnnl::matmul::primitive_desc pd;
  RETURN_IF_ERROR(DnnlGuarded("int8 matmul for this shape", [&]() -> absl::Status {
    const auto a_dt = a_type == DataType::kUint8 ? memory::data_type::u8 : memory::data_type::s8;
    const auto y_dt = form.to_float ? memory::data_type::f32 : memory::data_type::s32;
    compiled->a = memory::desc({rows, k()}, a_dt, memory::format_tag::ab);
    compiled->y = memory::desc({rows, n()}, y_dt, memory::format_tag::ab);
    const memory::desc any_b({k(), n()}, memory::data_type::s8, memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    if (form.to_float) {
      // The per-column scale (known at run time only: A's scale comes with
      // A) and the bias are binary post-ops on the float sum: oneDNN 2.6's
      // brgemm kernels take those but not run-time output scales, which
      // fall back to a slower gemm-based kernel. The bias follows the scale,
      // as in the unfused graph.
      const memory::desc row({1, n()}, memory::data_type::f32, memory::format_tag::ab);
      dnnl::post_ops ops;
      ops.append_binary(dnnl::algorithm::binary_mul, row);
      if (form.bias) ops.append_binary(dnnl::algorithm::binary_add, row);
      if (form.activation == DnnlMatMul::Activation::kRelu) {
        ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      }
      if (form.activation == DnnlMatMul::Activation::kGelu) {
        ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
      }
      attr.set_post_ops(ops);
    }
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(compiled->a, any_b, compiled->y), attr, DnnlCpuEngine());
    compiled->matmul = dnnl::matmul(pd);
    compiled->scratchpad = pd.scratchpad_desc();
    return absl::OkStatus();
  }));
  ASSIGN_OR_RETURN(compiled->weights,
                   PackedWeights(b_, memory::desc({k(), n()}, memory::data_type::s8, memory::format_tag::ab),
                                 pd.weights_desc()));
  absl::MutexLock lock(&mu_);
  if (compiled_.size() < kMaxCompiled) compiled_.emplace(key, compiled);
  return std::shared_ptr<const Compiled>(std::move(compiled));
}

namespace {

absl::Status CheckA(const Tensor& a, int64_t rows, int64_t k) {
  if (a.type() != DataType::kUint8 && a.type() != DataType::kInt8) {
    return absl::InvalidArgumentError(absl::StrCat("int8 matmul takes 8-bit A, received ", DataTypeName(a.type())));
  }
  if (rows * k != a.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("A ", DimsToString(a.dims()), " is not ", rows, " rows of ", k));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DnnlIntegerMatMul::Run(const Tensor& a, int64_t rows, int32_t a_zero_point, int32_t* y) const {
  RETURN_IF_ERROR(CheckA(a, rows, k()));
  if (rows == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(rows, a.type(), Form()));
  return Execute(*c, a, rows, a_zero_point, y, nullptr, nullptr);
}

absl::Status DnnlIntegerMatMul::RunToFloat(const Tensor& a, int64_t rows, int32_t a_zero_point,
                                           const FloatEpilogue& epilogue, float* y) const {
  RETURN_IF_ERROR(CheckA(a, rows, k()));
  if (epilogue.scales == nullptr) return absl::InvalidArgumentError("int8 matmul to float needs its scales");
  if (rows == 0) return absl::OkStatus();
  const Form form{true, epilogue.bias != nullptr, epilogue.activation};
  ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(rows, a.type(), form));
  return Execute(*c, a, rows, a_zero_point, y, epilogue.scales, epilogue.bias);
}

absl::Status DnnlIntegerMatMul::Execute(const Compiled& c, const Tensor& a, int64_t rows, int32_t a_zero_point, void* y,
                                        const float* scales, const float* bias) const {
  return DnnlGuarded("int8 matmul run", [&]() -> absl::Status {
    ApplyThreadSettings();
    const dnnl::engine& engine = DnnlCpuEngine();
    void* pad = KernelScratchBytes(kScratchPrimitive, c.scratchpad.get_size());
    if (pad == nullptr && c.scratchpad.get_size() > 0) {
      return absl::ResourceExhaustedError("no memory for the int8 matmul's scratchpad");
    }
    int32_t zp = a_zero_point;
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, memory(c.a, engine, const_cast<void*>(a.raw()))},
        {DNNL_ARG_WEIGHTS, *c.weights},
        {DNNL_ARG_DST, memory(c.y, engine, y)},
        {DNNL_ARG_SCRATCHPAD, memory(c.scratchpad, engine, pad)},
        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
         memory(memory::desc({1}, memory::data_type::s32, memory::format_tag::x), engine, &zp)}};
    const memory::desc row({1, n()}, memory::data_type::f32, memory::format_tag::ab);
    if (scales != nullptr) {
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, memory(row, engine, const_cast<float*>(scales)));
    }
    if (bias != nullptr) {
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, memory(row, engine, const_cast<float*>(bias)));
    }
    dnnl::stream& stream = DnnlThreadStream();
    c.matmul.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  });
}

}  // namespace onyx
