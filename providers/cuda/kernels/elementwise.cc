// Element-wise operators: unary activations and math (Relu ... Gelu, Clip),
// numpy-broadcasting arithmetic (Add, Sub, Mul, Div, Pow, Max, Min) and
// comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual -> bool).
// Pow by a constant scalar exponent runs as a unary kernel (x*x, x*x*x, sqrt).
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/broadcast.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

bool IsCudaFloat(DataType t) { return t == DataType::kFloat || t == DataType::kFloat16; }

class Unary final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, UnaryOp op, float alpha = 0.f,
                                                          float beta = 0.f) {
    auto k = std::unique_ptr<Unary>(new Unary(op, alpha, beta));
    RETURN_IF_ERROR(k->UploadConstantInputs(info, {1, 2}));  // Clip bounds and Pow's exponent are read on the host
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    if (!IsCudaFloat(x->type())) {
      return ctx.Error(absl::StrCat("computes float and float16 on CUDA, received ", DataTypeName(x->type())));
    }
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, x->dims(), x->type()));
    return CheckLaunch(ctx, LaunchUnary(op_, x->type(), x->raw(), y->mutable_raw(), x->num_elements(), alpha_, beta_,
                                        CurrentCudaLane().stream));
  }

 private:
  Unary(UnaryOp op, float alpha, float beta) : op_(op), alpha_(alpha), beta_(beta) {}
  UnaryOp op_;
  float alpha_, beta_;
};

class Binary final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, BinaryOp op) {
    auto k = std::unique_ptr<Binary>(new Binary(op));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0));
    ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1));
    if (a->type() != b->type()) {
      return ctx.Error(absl::StrCat("inputs must have one type on CUDA, received ", DataTypeName(a->type()), " and ",
                                    DataTypeName(b->type())));
    }
    const bool supported = op_ == BinaryOp::kPow ? IsCudaFloat(a->type())
                                                 : (IsCudaFloat(a->type()) || a->type() == DataType::kInt32 ||
                                                    a->type() == DataType::kInt64);
    if (!supported) return ctx.Error(absl::StrCat("type ", DataTypeName(a->type()), " is not supported on CUDA"));
    auto out_dims = BroadcastShape({a->dims(), b->dims()});
    if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
    RETURN_IF_ERROR(CheckIndexable(ctx, NumElements(*out_dims), "the output"));
    auto args = MakeBroadcastArgs(*out_dims, {a->dims(), b->dims()});
    if (!args.ok()) return ctx.Error(args.status().message());
    const DataType out_type = IsComparison(op_) ? DataType::kBool : a->type();
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, *out_dims, out_type));
    return CheckLaunch(
        ctx, LaunchBinary(op_, a->type(), *args, a->raw(), b->raw(), y->mutable_raw(), CurrentCudaLane().stream));
  }

 private:
  explicit Binary(BinaryOp op) : op_(op) {}
  BinaryOp op_;
};

// The scalar value of a constant input, or nullopt.
std::optional<float> ConstantScalar(const OpKernelInfo& info, int i) {
  const Tensor* t = info.ConstantInput(i);
  if (t == nullptr || t->num_elements() != 1) return std::nullopt;
  if (t->type() == DataType::kInt64 || t->type() == DataType::kInt32) {
    auto v = ReadInt64s(info, *t, "exponent");
    if (!v.ok()) return std::nullopt;
    return static_cast<float>((*v)[0]);
  }
  auto v = ReadFloats(info, *t, "exponent");
  if (!v.ok()) return std::nullopt;
  return (*v)[0];
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreatePow(const OpKernelInfo& info) {
  RETURN_IF_ERROR(CheckElementwiseNode(info));
  if (std::optional<float> e = ConstantScalar(info, 1)) {
    const ValueInfo* base = info.InputInfo(0);
    // A scalar exponent broadcasts to the base's shape, so the output has it
    // unless the base has rank 0 and the exponent a higher rank.
    const Tensor* t = info.ConstantInput(1);
    if (t->rank() == 0 || (base != nullptr && base->has_shape && base->dims.size() >= static_cast<size_t>(t->rank()))) {
      return Unary::Create(info, UnaryOp::kPowScalar, *e);
    }
  }
  return Binary::Create(info, BinaryOp::kPow);
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateClip(const OpKernelInfo& info) {
  RETURN_IF_ERROR(CheckElementwiseNode(info));
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (info.node().since_version < 11) {
    lo = info.AttrOr<float>("min", lo);
    hi = info.AttrOr<float>("max", hi);
  } else {
    for (int i : {1, 2}) {
      const Tensor* t = info.ConstantInput(i);
      if (t == nullptr) continue;
      ASSIGN_OR_RETURN(std::vector<float> v, ReadFloats(info, *t, i == 1 ? "min" : "max"));
      if (v.size() != 1)
        return info.Error(absl::StrCat("input ", i, " must be a scalar, received ", v.size(), " values"));
      (i == 1 ? lo : hi) = v[0];
    }
  }
  return Unary::Create(info, UnaryOp::kClip, lo, hi);
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateGelu(const OpKernelInfo& info) {
  RETURN_IF_ERROR(CheckElementwiseNode(info));
  const std::string approximate = info.AttrOr<std::string>("approximate", "none");
  return Unary::Create(info, approximate == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGeluErf);
}

void RegisterUnary(KernelRegistry& r, const char* op, int since, UnaryOp kind) {
  r.Register(KernelDefBuilder(op).Since(since).Types("T", kCudaFloatTypes).MayInplace(0, 0).Build(),
             [kind](const OpKernelInfo& info) { return Unary::Create(info, kind); });
}

template <typename Fn>
void RegisterUnaryWith(KernelRegistry& r, const char* op, int since, Fn factory) {
  r.Register(KernelDefBuilder(op).Since(since).Types("T", kCudaFloatTypes).MayInplace(0, 0).Build(), factory);
}

void RegisterBinary(KernelRegistry& r, const char* op, int since, BinaryOp kind) {
  r.Register(KernelDefBuilder(op).Since(since).Types("T", kCudaArithmeticTypes).Build(),
             [kind](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
               RETURN_IF_ERROR(CheckElementwiseNode(info));
               return Binary::Create(info, kind);
             });
}

}  // namespace

absl::Status CheckElementwiseNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (!n.domain.empty() && n.domain != kOnyxDomain) return absl::OkStatus();
  if (n.domain == kOnyxDomain) {
    if (n.op_type != "Gelu") return absl::OkStatus();
    const DataType t = info.InputType(0);
    if (t != DataType::kUndefined && !IsCudaFloat(t)) {
      return info.Error(absl::StrCat("com.onyx Gelu computes float and float16 on CUDA, received ", DataTypeName(t)));
    }
    return absl::OkStatus();
  }
  if (n.op_type == "Clip" && n.since_version >= 11) {
    RETURN_IF_ERROR(RequireConstantInput(info, 1, "min"));
    RETURN_IF_ERROR(RequireConstantInput(info, 2, "max"));
  }
  if (n.op_type == "Pow") {
    const DataType base = info.InputType(0), exponent = info.InputType(1);
    const Tensor* e = info.ConstantInput(1);
    const bool scalar_constant = e != nullptr && e->num_elements() == 1;
    if (!scalar_constant && base != DataType::kUndefined && exponent != DataType::kUndefined && base != exponent) {
      return info.Error(absl::StrCat("Pow of ", DataTypeName(base), " by a computed ", DataTypeName(exponent),
                                     " exponent is not supported on CUDA (needs one type, or a constant scalar "
                                     "exponent)"));
    }
  }
  if ((n.op_type == "Max" || n.op_type == "Min") && info.InputCount() != 2) {
    return info.Error(absl::StrCat(n.op_type, " takes exactly 2 inputs on CUDA, received ", info.InputCount()));
  }
  return absl::OkStatus();
}

void RegisterElementwiseKernels(KernelRegistry& r) {
  RegisterUnary(r, "Relu", 6, UnaryOp::kRelu);
  RegisterUnary(r, "Sigmoid", 6, UnaryOp::kSigmoid);
  RegisterUnary(r, "Tanh", 6, UnaryOp::kTanh);
  RegisterUnary(r, "Erf", 9, UnaryOp::kErf);
  RegisterUnary(r, "Exp", 6, UnaryOp::kExp);
  RegisterUnary(r, "Log", 6, UnaryOp::kLog);
  RegisterUnary(r, "Sqrt", 6, UnaryOp::kSqrt);
  RegisterUnary(r, "Neg", 6, UnaryOp::kNeg);
  RegisterUnary(r, "Abs", 6, UnaryOp::kAbs);
  RegisterUnary(r, "Reciprocal", 6, UnaryOp::kReciprocal);
  RegisterUnary(r, "Floor", 6, UnaryOp::kFloor);
  RegisterUnary(r, "Ceil", 6, UnaryOp::kCeil);
  RegisterUnary(r, "Softplus", 1, UnaryOp::kSoftplus);
  RegisterUnary(r, "HardSwish", 14, UnaryOp::kHardSwish);
  RegisterUnaryWith(r, "LeakyRelu", 6, [](const OpKernelInfo& info) {
    return Unary::Create(info, UnaryOp::kLeakyRelu, info.AttrOr<float>("alpha", 0.01f));
  });
  RegisterUnaryWith(r, "HardSigmoid", 6, [](const OpKernelInfo& info) {
    return Unary::Create(info, UnaryOp::kHardSigmoid, info.AttrOr<float>("alpha", 0.2f),
                         info.AttrOr<float>("beta", 0.5f));
  });
  RegisterUnaryWith(r, "Elu", 6, [](const OpKernelInfo& info) {
    return Unary::Create(info, UnaryOp::kElu, info.AttrOr<float>("alpha", 1.0f));
  });
  RegisterUnaryWith(r, "Clip", 6, CreateClip);
  RegisterUnaryWith(r, "Gelu", 20, CreateGelu);
  // The optimizer's erf GELU (FuseGelu); it has no schema, so the type is
  // checked by CheckElementwiseNode and at run time.
  r.Register(KernelDefBuilder("Gelu").Domain(kOnyxDomain).MayInplace(0, 0).Build(),
             [](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
               RETURN_IF_ERROR(CheckElementwiseNode(info));
               return Unary::Create(info, UnaryOp::kGeluErf);
             });

  RegisterBinary(r, "Add", 7, BinaryOp::kAdd);
  RegisterBinary(r, "Sub", 7, BinaryOp::kSub);
  RegisterBinary(r, "Mul", 7, BinaryOp::kMul);
  RegisterBinary(r, "Div", 7, BinaryOp::kDiv);
  RegisterBinary(r, "Equal", 7, BinaryOp::kEqual);
  RegisterBinary(r, "Less", 7, BinaryOp::kLess);
  RegisterBinary(r, "Greater", 7, BinaryOp::kGreater);
  RegisterBinary(r, "LessOrEqual", 12, BinaryOp::kLessOrEqual);
  RegisterBinary(r, "GreaterOrEqual", 12, BinaryOp::kGreaterOrEqual);
  RegisterBinary(r, "Max", 8, BinaryOp::kMax);
  RegisterBinary(r, "Min", 8, BinaryOp::kMin);
  r.Register(KernelDefBuilder("Pow").Since(7).Types("T", kCudaFloatTypes).Build(), CreatePow);
}

}  // namespace onyx::cuda_ops
