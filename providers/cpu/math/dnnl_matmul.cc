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
    : k_(b.dims()[b_transposed ? 1 : 0]),
      n_(b.dims()[b_transposed ? 0 : 1]),
      b_dims_(b.dims()),
      activation_(activation),
      b_transposed_(b_transposed) {
  if (bias != nullptr) bias_ = *bias;
}

namespace {

// B stored [N, K] is the [K, N] matrix in column-major order ("ba").
memory::desc PlainBDesc(int64_t k, int64_t n, bool b_transposed) {
  return memory::desc({k, n}, memory::data_type::f32, b_transposed ? memory::format_tag::ba : memory::format_tag::ab);
}

}  // namespace

int64_t DnnlMatMul::RowsHint(const ValueInfo* a) {
  if (a == nullptr || !a->has_shape || a->dims.empty()) return 0;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < a->dims.size(); ++i) {
    if (a->dims[i] < 0) return 0;
    rows *= a->dims[i];
  }
  return rows;
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
                                                               Activation activation, bool b_transposed,
                                                               int64_t rows_hint) {
  if (b.type() != DataType::kFloat || b.rank() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("B must be float ", b_transposed ? "[N, K]" : "[K, N]",
                                                   ", received ", DataTypeName(b.type()), " ", DimsToString(b.dims())));
  }
  const int64_t n = b.dims()[b_transposed ? 0 : 1];
  if (bias != nullptr && (bias->type() != DataType::kFloat || bias->num_elements() != n)) {
    return absl::InvalidArgumentError(absl::StrCat("bias must be float with ", n, " values, received ",
                                                   DataTypeName(bias->type()), " ", DimsToString(bias->dims())));
  }
  auto mm = std::unique_ptr<DnnlMatMul>(new DnnlMatMul(b, bias, activation, b_transposed));
  mm->empty_b_ = b.num_elements() == 0;
  if (mm->empty_b_) return mm;  // nothing to pack; Run multiplies nothing
  // Packs b now, for the rows most likely to come (a mid-sized count when
  // the graph does not know them), so that nothing needs b after creation.
  const int64_t rows = rows_hint > 0 ? rows_hint : 64;
  auto first = mm->CompiledFor(rows, &b);
  if (!first.ok()) return first.status();
  mm->source_ = WeightSource(b, PlainBDesc(mm->k(), mm->n(), b_transposed));
  {
    absl::MutexLock lock(&mm->mu_);
    mm->reference_ = (*first)->weights;
    if (rows_hint <= 0) mm->unused_guess_.emplace(rows, IntraOpThreads());
  }
  return mm;
}

absl::StatusOr<std::shared_ptr<const DnnlMatMul::Compiled>> DnnlMatMul::CompiledFor(int64_t rows,
                                                                                    const Tensor* plain_b) const {
  // As for convolutions, a primitive must not run with more threads than it
  // was created for.
  ApplyThreadSettings();
  std::pair<int64_t, int> key(rows, IntraOpThreads());
  {
    absl::MutexLock lock(&mu_);
    auto it = compiled_.find(key);
    if (it != compiled_.end()) {
      if (plain_b == nullptr && unused_guess_ == key) unused_guess_.reset();
      return it->second;
    }
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
  if (plain_b != nullptr) {
    const memory::desc plain_desc = PlainBDesc(k(), n(), b_transposed_);
    ASSIGN_OR_RETURN(compiled->weights, PackedWeights(*plain_b, plain_desc, pd.weights_desc()));
  } else {
    std::shared_ptr<const memory> reference;
    {
      absl::MutexLock lock(&mu_);
      reference = reference_;
    }
    ASSIGN_OR_RETURN(compiled->weights, PackedWeights(source_, *reference, pd.weights_desc()));
  }
  absl::MutexLock lock(&mu_);
  if (plain_b == nullptr && unused_guess_.has_value()) {
    // The row count packed for at creation was a guess, and the first run
    // has another: its copy becomes the reference, the guess's goes.
    compiled_.erase(*unused_guess_);
    unused_guess_.reset();
    reference_ = compiled->weights;
  }
  if (compiled_.size() < kMaxCompiled) compiled_.emplace(key, compiled);
  return std::shared_ptr<const Compiled>(std::move(compiled));
}

absl::StatusOr<Tensor> DnnlMatMul::PlainB() const {
  Tensor b = Tensor::Allocate(DataType::kFloat, b_dims_);
  if (b.num_elements() == 0) return b;
  std::shared_ptr<const memory> reference;
  {
    absl::MutexLock lock(&mu_);
    reference = reference_;
  }
  RETURN_IF_ERROR(DnnlGuarded("weight unpacking", [&]() -> absl::Status {
    memory plain(PlainBDesc(k(), n(), b_transposed_), DnnlCpuEngine(), b.mutable_raw());
    dnnl::reorder(*reference, plain).execute(DnnlThreadStream(), const_cast<memory&>(*reference), plain);
    DnnlThreadStream().wait();
    return absl::OkStatus();
  }));
  return b;
}

absl::Status DnnlMatMul::Run(const float* a, int64_t rows, float* y) const {
  if (rows == 0) return absl::OkStatus();
  if (empty_b_) {  // y = act(bias), or nothing when N is 0
    for (int64_t r = 0; r < rows && n() > 0; ++r) {
      for (int64_t j = 0; j < n(); ++j) y[r * n() + j] = bias_.defined() ? bias_.data<float>()[j] : 0.f;
    }
    return ApplyActivation(activation_, y, rows * n());
  }
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
