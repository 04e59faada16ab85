#include "providers/cpu/math/dnnl_matmul.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "onyx/status_macros.h"
#include "providers/cpu/nn/dnnl_support.h"
#include "providers/cpu/nn/packed_weights.h"

namespace onyx {

using dnnl::memory;

struct DnnlMatMul::Compiled {
  dnnl::matmul matmul;
  memory::desc a, y, scratchpad;
  std::shared_ptr<const memory> weights;  // shared (packed_weights.h)
  std::optional<memory> bias;
};

DnnlMatMul::DnnlMatMul(const Tensor& b, const Tensor* bias, Activation activation, bool b_transposed)
    : b_(b), activation_(activation), b_transposed_(b_transposed) {
  if (bias != nullptr) bias_ = *bias;
}

DnnlMatMul::~DnnlMatMul() = default;

absl::StatusOr<DnnlMatMul::Activation> DnnlMatMul::ParseActivation(const std::string& name) {
  if (name.empty()) return Activation::kNone;
  if (name == "Relu") return Activation::kRelu;
  if (name == "Gelu") return Activation::kGelu;
  return absl::InvalidArgumentError("unsupported activation '" + name + "' (supported: Relu, Gelu)");
}

absl::Status DnnlMatMul::ApplyActivation(Activation activation, float* y, int64_t n) {
  if (activation == Activation::kRelu) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::max(y[i], 0.f);
  }
  if (activation == Activation::kGelu) return DnnlEltwise(dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f, y, y, n);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DnnlMatMul>> DnnlMatMul::Create(const Tensor& b, const Tensor* bias,
                                                               Activation activation, bool b_transposed) {
  if (b.type() != DataType::kFloat || b.rank() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("B must be float ", b_transposed ? "[N, K]" : "[K, N]",
                                                   ", received ", DataTypeName(b.type()), " ", DimsToString(b.dims())));
  }
  const int64_t n = b.dims()[b_transposed ? 0 : 1];
  if (bias != nullptr && (bias->type() != DataType::kFloat || bias->num_elements() != n)) {
    return absl::InvalidArgumentError(absl::StrCat("bias must be float with ", n, " values, received ",
                                                   DataTypeName(bias->type()), " ", DimsToString(bias->dims())));
  }
  return std::unique_ptr<DnnlMatMul>(new DnnlMatMul(b, bias, activation, b_transposed));
}

absl::StatusOr<std::shared_ptr<const DnnlMatMul::Compiled>> DnnlMatMul::CompiledFor(int64_t rows) const {
  // As for convolutions, a primitive must not run with more threads than it
  // was created for.
  ApplyThreadSettings();
  std::pair<int64_t, int> key(rows, IntraOpThreads());
  {
    absl::MutexLock lock(&mu_);
    auto it = compiled_.find(key);
    if (it != compiled_.end()) return it->second;
  }
  auto compiled = std::make_shared<Compiled>();
  dnnl::matmul::primitive_desc pd;
  RETURN_IF_ERROR(DnnlGuarded("matmul for this shape", [&]() -> absl::Status {
    const auto f32 = memory::data_type::f32;
    compiled->a = memory::desc({rows, k()}, f32, memory::format_tag::ab);
    compiled->y = memory::desc({rows, n()}, f32, memory::format_tag::ab);
    const memory::desc any_b({k(), n()}, f32, memory::format_tag::any);
    const bool has_bias = bias_.type() == DataType::kFloat;
    const memory::desc bias_md = has_bias ? memory::desc({1, n()}, f32, memory::format_tag::ab) : memory::desc();
    dnnl::post_ops ops;
    if (activation_ == Activation::kRelu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    if (activation_ == Activation::kGelu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(compiled->a, any_b, bias_md, compiled->y), attr,
                                      DnnlCpuEngine());
    compiled->matmul = dnnl::matmul(pd);
    compiled->scratchpad = pd.scratchpad_desc();
    if (has_bias) compiled->bias = memory(bias_md, DnnlCpuEngine(), const_cast<void*>(bias_.raw()));
    return absl::OkStatus();
  }));
  // B stored [N, K] is the [K, N] matrix in column-major order ("ba").
  const memory::format_tag b_layout = b_transposed_ ? memory::format_tag::ba : memory::format_tag::ab;
  ASSIGN_OR_RETURN(compiled->weights,
                   PackedWeights(b_, memory::desc({k(), n()}, memory::data_type::f32, b_layout), pd.weights_desc()));
  absl::MutexLock lock(&mu_);
  if (compiled_.size() < kMaxCompiled) compiled_.emplace(key, compiled);
  return std::shared_ptr<const Compiled>(std::move(compiled));
}

absl::Status DnnlMatMul::Run(const float* a, int64_t rows, float* y) const {
  if (rows == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(rows));
  return DnnlGuarded("matmul run", [&]() -> absl::Status {
    ApplyThreadSettings();
    const dnnl::engine& engine = DnnlCpuEngine();
    void* pad = KernelScratchBytes(kScratchPrimitive, c->scratchpad.get_size());
    if (pad == nullptr && c->scratchpad.get_size() > 0) {
      return absl::ResourceExhaustedError("no memory for the matmul's scratchpad");
    }
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(c->a, engine, const_cast<float*>(a))},
                                            {DNNL_ARG_WEIGHTS, *c->weights},
                                            {DNNL_ARG_DST, memory(c->y, engine, y)},
                                            {DNNL_ARG_SCRATCHPAD, memory(c->scratchpad, engine, pad)}};
    if (c->bias) args.emplace(DNNL_ARG_BIAS, *c->bias);
    dnnl::stream& stream = DnnlThreadStream();
    c->matmul.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  });
}

}  // namespace onyx
