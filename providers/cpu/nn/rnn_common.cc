#include "providers/cpu/nn/rnn_common.h"

#include <cmath>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

struct ActivationSpec {
  const char* name;
  RnnActivation::Kind kind;
  int params;         // how many of alpha, beta it consumes
  float alpha, beta;  // defaults
};

constexpr ActivationSpec kActivations[] = {
    {"Relu", RnnActivation::Kind::kRelu, 0, 0.f, 0.f},
    {"Tanh", RnnActivation::Kind::kTanh, 0, 0.f, 0.f},
    {"Sigmoid", RnnActivation::Kind::kSigmoid, 0, 0.f, 0.f},
    {"Affine", RnnActivation::Kind::kAffine, 2, 1.f, 0.f},
    {"LeakyRelu", RnnActivation::Kind::kLeakyRelu, 1, 0.01f, 0.f},
    {"ThresholdedRelu", RnnActivation::Kind::kThresholdedRelu, 1, 1.f, 0.f},
    {"ScaledTanh", RnnActivation::Kind::kScaledTanh, 2, 1.f, 1.f},
    {"HardSigmoid", RnnActivation::Kind::kHardSigmoid, 2, 0.2f, 0.5f},
    {"Elu", RnnActivation::Kind::kElu, 1, 1.f, 0.f},
    {"Softsign", RnnActivation::Kind::kSoftsign, 0, 0.f, 0.f},
    {"Softplus", RnnActivation::Kind::kSoftplus, 0, 0.f, 0.f},
};

// [dirs, batch, hidden] <-> [batch, dirs, hidden]: swaps the outer dims a and
// b of [a, b, inner].
template <typename T>
void SwapOuter(const T* src, T* dst, int64_t a, int64_t b, int64_t inner) {
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j)
      std::memcpy(dst + (j * a + i) * inner, src + (i * b + j) * inner, inner * sizeof(T));
  }
}

absl::StatusOr<Tensor> Convert(const Tensor& t, DataType type) { return ConvertNumeric(t, type); }

}  // namespace

template <typename T>
void RnnActivation::Apply(T* v, int64_t n) const {
  const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
  if constexpr (std::is_same_v<T, float>) {  // the gates' usual functions, vectorised
    if (kind == Kind::kTanh) return simd::Tanh(v, v, n);
    if (kind == Kind::kSigmoid) return simd::Sigmoid(v, v, n);
  }
  switch (kind) {
    case Kind::kRelu:
      for (int64_t i = 0; i < n; ++i) v[i] = std::max(v[i], T(0));
      break;
    case Kind::kTanh:
      for (int64_t i = 0; i < n; ++i) v[i] = std::tanh(v[i]);
      break;
    case Kind::kSigmoid:
      for (int64_t i = 0; i < n; ++i)
        v[i] = v[i] >= 0 ? T(1) / (T(1) + std::exp(-v[i])) : std::exp(v[i]) / (T(1) + std::exp(v[i]));
      break;
    case Kind::kAffine:
      for (int64_t i = 0; i < n; ++i) v[i] = a * v[i] + b;
      break;
    case Kind::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) v[i] = v[i] < 0 ? a * v[i] : v[i];
      break;
    case Kind::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) v[i] = v[i] > a ? v[i] : T(0);
      break;
    case Kind::kScaledTanh:
      for (int64_t i = 0; i < n; ++i) v[i] = a * std::tanh(b * v[i]);
      break;
    case Kind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) v[i] = std::max(T(0), std::min(T(1), a * v[i] + b));
      break;
    case Kind::kElu:
      for (int64_t i = 0; i < n; ++i) v[i] = v[i] < 0 ? a * (std::exp(v[i]) - T(1)) : v[i];
      break;
    case Kind::kSoftsign:
      for (int64_t i = 0; i < n; ++i) v[i] = v[i] / (T(1) + std::abs(v[i]));
      break;
    case Kind::kSoftplus:
      for (int64_t i = 0; i < n; ++i) v[i] = std::log1p(std::exp(v[i]));
      break;
  }
}

template void RnnActivation::Apply<float>(float*, int64_t) const;
template void RnnActivation::Apply<double>(double*, int64_t) const;

absl::StatusOr<RnnAttributes> RnnAttributes::FromInfo(const OpKernelInfo& info, int per_direction,
                                                      const std::vector<std::string>& defaults) {
  RnnAttributes a;
  const std::string direction = info.AttrOr<std::string>("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return info.Error("attribute 'direction' must be forward, reverse or bidirectional, received '" + direction + "'");
  }
  a.num_directions = direction == "bidirectional" ? 2 : 1;
  a.reverse = direction == "reverse";
  ASSIGN_OR_RETURN(a.hidden_size, info.Attr<int64_t>("hidden_size"));
  if (a.hidden_size <= 0)
    return info.Error(absl::StrCat("attribute 'hidden_size' must be positive, received ", a.hidden_size));
  a.clip = info.AttrOr<float>("clip", 0.f);
  a.layout = info.AttrOr<int64_t>("layout", 0);
  if (a.layout != 0 && a.layout != 1)
    return info.Error(absl::StrCat("attribute 'layout' must be 0 or 1, received ", a.layout));
  a.x_batch_major = a.layout == 1;
  a.y_layout = a.layout == 1 ? RnnYLayout::kBatchSeqDir : RnnYLayout::kSeqDirBatch;
  if (info.node().domain == kOnyxDomain) {
    const int64_t x_layout = info.AttrOr<int64_t>("x_layout", a.layout);
    if (x_layout != 0 && x_layout != 1)
      return info.Error(absl::StrCat("attribute 'x_layout' must be 0 or 1, received ", x_layout));
    const int64_t y_layout = info.AttrOr<int64_t>("y_layout", static_cast<int64_t>(a.y_layout));
    if (y_layout < 0 || y_layout > 2)
      return info.Error(absl::StrCat("attribute 'y_layout' must be 0, 1 or 2, received ", y_layout));
    a.x_batch_major = x_layout == 1;
    a.y_layout = static_cast<RnnYLayout>(y_layout);
  }
  a.per_direction = per_direction;
  // The schema's default list (RNN: Tanh, Tanh) assumes two directions; use
  // `defaults` per direction unless the node sets the attribute.
  std::vector<std::string> names;
  if (info.HasAttr("activations")) names = info.AttrOr<std::vector<std::string>>("activations", {});
  if (names.empty()) {
    for (int d = 0; d < a.num_directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (static_cast<int>(names.size()) != per_direction * a.num_directions) {
    return info.Error(absl::StrCat("attribute 'activations' has ", names.size(), " entries, expected ",
                                   per_direction * a.num_directions));
  }
  const std::vector<float> alphas = info.AttrOr<std::vector<float>>("activation_alpha", {});
  const std::vector<float> betas = info.AttrOr<std::vector<float>>("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const ActivationSpec* spec = nullptr;
    for (const auto& s : kActivations) {
      if (absl::EqualsIgnoreCase(name, s.name)) spec = &s;
    }
    if (spec == nullptr) return info.Error("unsupported activation '" + name + "'");
    RnnActivation act{spec->kind, spec->alpha, spec->beta};
    if (spec->params >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (spec->params >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
    a.activations.push_back(act);
  }
  return a;
}

absl::StatusOr<RnnInputs> ReadRnnInputs(const OpKernelContext& ctx, const RnnAttributes& attrs, int gates) {
  RnnInputs in;
  ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
  ASSIGN_OR_RETURN(const Tensor* w, RequireInput(ctx, 1, "W"));
  ASSIGN_OR_RETURN(const Tensor* r, RequireInput(ctx, 2, "R"));
  if (x->rank() != 3) return ctx.Error("X must be 3-D, received " + DimsToString(x->dims()));
  in.compute_type = x->type() == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
  const int64_t dirs = attrs.num_directions, h = attrs.hidden_size;
  in.hidden = h;
  in.x_batch_major = attrs.x_batch_major;
  in.seq = in.x_batch_major ? x->dims()[1] : x->dims()[0];
  in.batch = in.x_batch_major ? x->dims()[0] : x->dims()[1];
  in.input_size = x->dims()[2];
  const Dims w_dims = {dirs, gates * h, in.input_size}, r_dims = {dirs, gates * h, h};
  if (w->dims() != w_dims) {
    return ctx.Error(absl::StrCat("W has shape ", DimsToString(w->dims()), ", expected ", DimsToString(w_dims)));
  }
  if (r->dims() != r_dims) {
    return ctx.Error(absl::StrCat("R has shape ", DimsToString(r->dims()), ", expected ", DimsToString(r_dims)));
  }
  ASSIGN_OR_RETURN(in.x, Convert(*x, in.compute_type));
  ASSIGN_OR_RETURN(in.w, Convert(*w, in.compute_type));
  ASSIGN_OR_RETURN(in.r, Convert(*r, in.compute_type));
  if (const Tensor* b = ctx.Input(3)) {
    const Dims b_dims = {dirs, 2 * gates * h};
    if (b->dims() != b_dims) {
      return ctx.Error(absl::StrCat("B has shape ", DimsToString(b->dims()), ", expected ", DimsToString(b_dims)));
    }
    ASSIGN_OR_RETURN(in.b, Convert(*b, in.compute_type));
  } else {
    in.b = Tensor::Allocate(in.compute_type, {dirs, 2 * gates * h});
  }
  in.seq_lens.assign(in.batch, in.seq);
  if (const Tensor* lens = ctx.Input(4)) {
    if (lens->num_elements() != in.batch || (lens->type() != DataType::kInt32 && lens->type() != DataType::kInt64)) {
      return ctx.Error(absl::StrCat("sequence_lens must be int32 with ", in.batch, " values, received ",
                                    DataTypeName(lens->type()), " ", DimsToString(lens->dims())));
    }
    for (int64_t i = 0; i < in.batch; ++i) {
      in.seq_lens[i] = ScalarAsInt64(*lens, i);
      if (in.seq_lens[i] < 0 || in.seq_lens[i] > in.seq) {
        return ctx.Error(absl::StrCat("sequence_lens[", i, "] = ", in.seq_lens[i], " is outside [0, ", in.seq, "]"));
      }
    }
  }
  ASSIGN_OR_RETURN(in.initial_h, ReadRnnState(ctx, 5, attrs, in, "initial_h"));
  return in;
}

absl::StatusOr<Tensor> ReadRnnState(const OpKernelContext& ctx, int input, const RnnAttributes& attrs,
                                    const RnnInputs& in, const char* name) {
  const int64_t dirs = attrs.num_directions;
  const Tensor* t = ctx.Input(input);
  if (t == nullptr) return Tensor::Allocate(in.compute_type, {dirs, in.batch, in.hidden});
  const Dims expected = attrs.layout == 0 ? Dims{dirs, in.batch, in.hidden} : Dims{in.batch, dirs, in.hidden};
  if (t->dims() != expected) {
    return ctx.Error(absl::StrCat(name, " has shape ", DimsToString(t->dims()), ", expected ", DimsToString(expected)));
  }
  ASSIGN_OR_RETURN(Tensor c, Convert(*t, in.compute_type));
  if (attrs.layout == 0) return c;
  Tensor out = Tensor::Allocate(in.compute_type, {dirs, in.batch, in.hidden});
  if (in.compute_type == DataType::kFloat)
    SwapOuter(c.data<float>(), out.mutable_data<float>(), in.batch, dirs, in.hidden);
  else SwapOuter(c.data<double>(), out.mutable_data<double>(), in.batch, dirs, in.hidden);
  return out;
}

template <typename T>
absl::StatusOr<const T*> InputProjection(const RnnInputs& in, int direction, int gates, int recurrent_bias_gates) {
  const int64_t rows = in.seq * in.batch, cols = gates * in.hidden;
  const T* wb = in.b.data<T>() + direction * 2 * cols;
  const T* rb = wb + cols;
  std::vector<T> bias(wb, wb + cols);
  for (int64_t j = 0; j < recurrent_bias_gates * in.hidden; ++j) bias[j] += rb[j];
  // Every row starts as the bias and the product accumulates onto it: one
  // pass over the output besides the GEMM's own.
  T* out = KernelScratch<T>(kScratchRecurrentInput, rows * cols);
  if (out == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate the input projection (", rows, " x ", cols, " values)"));
  }
  for (int64_t r = 0; r < rows; ++r) std::copy(bias.begin(), bias.end(), out + r * cols);
  const T* w = in.w.data<T>() + direction * cols * in.input_size;
  RETURN_IF_ERROR(GemmAny<T>(false, true, rows, cols, in.input_size, in.x.data<T>(), in.input_size, w, in.input_size,
                             true, out, cols));
  return out;
}

template absl::StatusOr<const float*> InputProjection<float>(const RnnInputs&, int, int, int);
template absl::StatusOr<const double*> InputProjection<double>(const RnnInputs&, int, int, int);

template <typename T>
absl::Status RnnOutputY<T>::Open(OpKernelContext& ctx, const RnnAttributes& attrs, const RnnInputs& in) {
  if (!ctx.OutputRequested(0)) return absl::OkStatus();
  const int64_t seq = in.seq, batch = in.batch, dirs = attrs.num_directions, h = in.hidden;
  switch (attrs.y_layout) {
    case RnnYLayout::kSeqDirBatch:
      dims_ = {seq, dirs, batch, h};
      time_stride_ = dirs * batch * h, dir_stride_ = batch * h, batch_stride_ = h;
      break;
    case RnnYLayout::kBatchSeqDir:
      dims_ = {batch, seq, dirs, h};
      time_stride_ = dirs * h, dir_stride_ = h, batch_stride_ = seq * dirs * h;
      break;
    case RnnYLayout::kSeqBatchDir:
      dims_ = {seq, batch, dirs, h};
      time_stride_ = batch * dirs * h, dir_stride_ = h, batch_stride_ = dirs * h;
      break;
  }
  const DataType out_type = ctx.Input(0)->type();
  if (out_type != in.compute_type) {
    staging_ = Tensor::Allocate(in.compute_type, dims_);  // zeros
    base_ = staging_.mutable_data<T>();
    return absl::OkStatus();
  }
  // Zeros only where some entry's sequence ends early: every row is written
  // otherwise.
  Tensor* out = nullptr;
  if (in.AllFullLength()) {
    ASSIGN_OR_RETURN(out, ctx.OutputForOverwrite(0, dims_, out_type));
  } else {
    ASSIGN_OR_RETURN(out, ctx.Output(0, dims_, out_type));
  }
  base_ = out->mutable_data<T>();
  return absl::OkStatus();
}

template <typename T>
absl::Status RnnOutputY<T>::Finish(OpKernelContext& ctx) const {
  if (staging_.num_elements() == 0 || base_ == nullptr) return absl::OkStatus();
  const DataType out_type = ctx.Input(0)->type();
  ASSIGN_OR_RETURN(Tensor converted, Convert(staging_, out_type));
  ASSIGN_OR_RETURN(Tensor * out, ctx.OutputForOverwrite(0, dims_, out_type));
  std::memcpy(out->mutable_raw(), converted.raw(), out->byte_size());
  return absl::OkStatus();
}

template class RnnOutputY<float>;
template class RnnOutputY<double>;

absl::Status WriteRnnStates(OpKernelContext& ctx, const RnnAttributes& attrs, const RnnInputs& in,
                            const std::vector<const Tensor*>& states) {
  const int64_t dirs = attrs.num_directions, h = in.hidden;
  const DataType out_type = ctx.Input(0)->type();
  auto store = [&](int index, const Tensor& value, const Dims& dims) -> absl::Status {
    ASSIGN_OR_RETURN(Tensor converted, Convert(value, out_type));
    ASSIGN_OR_RETURN(Tensor * out, ctx.OutputForOverwrite(index, dims, out_type));
    std::memcpy(out->mutable_raw(), converted.raw(), out->byte_size());
    return absl::OkStatus();
  };
  for (size_t i = 0; i < states.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (!ctx.OutputRequested(index)) continue;
    const Tensor& state = *states[i];
    if (attrs.layout == 0) {
      RETURN_IF_ERROR(store(index, state, {dirs, in.batch, h}));
    } else {  // [dirs, batch, h] -> [batch, dirs, h]
      Tensor arranged = Tensor::Allocate(state.type(), {in.batch, dirs, h});
      if (state.type() == DataType::kFloat)
        SwapOuter(state.data<float>(), arranged.mutable_data<float>(), dirs, in.batch, h);
      else SwapOuter(state.data<double>(), arranged.mutable_data<double>(), dirs, in.batch, h);
      RETURN_IF_ERROR(store(index, arranged, {in.batch, dirs, h}));
    }
  }
  return absl::OkStatus();
}

absl::Status ForEachDirection(int directions, const std::function<absl::Status(int)>& fn) {
  if (directions == 2 && IntraOpThreads() > 1) {
    absl::Status status[2];
    ParallelFor(2, 1, [&](int64_t begin, int64_t end) {
      for (int64_t d = begin; d < end; ++d) status[d] = fn(static_cast<int>(d));
    });
    RETURN_IF_ERROR(status[0]);
    return status[1];
  }
  for (int d = 0; d < directions; ++d) RETURN_IF_ERROR(fn(d));
  return absl::OkStatus();
}

}  // namespace onyx
