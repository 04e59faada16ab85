// MatMul (numpy batching and broadcasting), Gemm, and the optimizer's
// com.onyx FusedMatMul (A [..., K] x B [K, N] + bias [N], then "Relu" or
// "Gelu") and FusedGemm (Gemm, then "Relu"), all through cuBLASLt
// (lt_matmul.h).
//
// Bias and Relu run in cuBLASLt's epilogue. FusedMatMul's "Gelu" is ONNX's
// exact erf GELU (the form FuseGelu matches), which cuBLASLt's GELU epilogue
// (the tanh approximation) is not: it runs as the bias epilogue followed by
// the element-wise erf GELU kernel, in place.
//
// MatMul batches: a B without batch (weights) folds A's batch into the rows
// (one product); equal batches or a batch against a single matrix are one
// strided-batched product; other broadcasts run one product per output
// matrix.
#include "absl/strings/str_cat.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/broadcast.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"
#include "providers/cuda/kernels/lt_matmul.h"

namespace onyx::cuda_ops {
namespace {

bool IsCudaFloat(DataType t) { return t == DataType::kFloat || t == DataType::kFloat16; }

absl::Status CheckTypes(const OpKernelContext& ctx, std::initializer_list<const Tensor*> tensors) {
  const DataType t = (*tensors.begin())->type();
  for (const Tensor* x : tensors) {
    if (x != nullptr && (x->type() != t || !IsCudaFloat(t))) {
      return ctx.Error(absl::StrCat("inputs must all be float or all float16 on CUDA, received ", DataTypeName(t),
                                    " and ", DataTypeName(x->type())));
    }
  }
  return absl::OkStatus();
}

// The `activation` attribute of a fused product: "" or one of `allowed`.
absl::StatusOr<std::string> ParseActivation(const OpKernelInfo& info, std::initializer_list<const char*> allowed) {
  const std::string activation = info.AttrOr<std::string>("activation", "");
  if (activation.empty()) return activation;
  for (const char* a : allowed) {
    if (activation == a) return activation;
  }
  return info.Error(absl::StrCat("activation '", activation, "' is not supported on CUDA"));
}

class MatMul final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<MatMul>(new MatMul());
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0));
    ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1));
    RETURN_IF_ERROR(CheckTypes(ctx, {a, b}));
    if (a->rank() < 1 || b->rank() < 1) return ctx.Error("inputs must have rank >= 1");
    Dims ad = a->dims(), bd = b->dims();
    if (a->rank() == 1) ad.insert(ad.begin(), 1);
    if (b->rank() == 1) bd.push_back(1);
    const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
    if (bd[bd.size() - 2] != k) {
      return ctx.Error(absl::StrCat("shapes ", DimsToString(a->dims()), " and ", DimsToString(b->dims()),
                                    " do not multiply (K ", k, " vs ", bd[bd.size() - 2], ")"));
    }
    const absl::Span<const int64_t> batch_a(ad.data(), ad.size() - 2), batch_b(bd.data(), bd.size() - 2);
    auto batch = BroadcastShape({batch_a, batch_b});
    if (!batch.ok()) return ctx.Error(batch.status().message());
    Dims out_dims = *batch;
    if (a->rank() > 1) out_dims.push_back(m);
    if (b->rank() > 1) out_dims.push_back(n);
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, a->type()));
    const int64_t count = NumElements(*batch), count_a = NumElements(batch_a), count_b = NumElements(batch_b);
    const CudaLane& lane = CurrentCudaLane();
    LtProduct p;
    p.type = a->type();
    p.m = m, p.n = n, p.k = k;
    p.a = a->raw(), p.b = b->raw(), p.d = y->mutable_raw();
    if (count_b == 1) {  // one B: A's batch folds into its rows
      p.m = count * m;
      return RunLtProduct(p, lane, ctx.node());
    }
    if (count_a == 1 || (count_a == count && count_b == count)) {
      // A single A against B's batch, or both with the whole output batch
      // (a count equal to the broadcast's means no dim of 1 was repeated).
      p.batch = count;
      p.stride_a = count_a == 1 ? 0 : m * k;
      p.stride_b = k * n;
      p.stride_d = m * n;
      return RunLtProduct(p, lane, ctx.node());
    }
    // Other broadcasts: one product per output matrix.
    const size_t elem = ElementSize(a->type());
    const size_t rank = batch->size();
    const Dims out_strides = StridesOf(*batch), a_strides = StridesOf(batch_a), b_strides = StridesOf(batch_b);
    p.batch = 1;
    for (int64_t o = 0; o < count; ++o) {
      int64_t ia = 0, ib = 0, rest = o;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t coord = rest / out_strides[d];
        rest %= out_strides[d];
        const int64_t da = static_cast<int64_t>(d + batch_a.size()) - static_cast<int64_t>(rank);
        const int64_t db = static_cast<int64_t>(d + batch_b.size()) - static_cast<int64_t>(rank);
        if (da >= 0 && batch_a[da] != 1) ia += coord * a_strides[da];
        if (db >= 0 && batch_b[db] != 1) ib += coord * b_strides[db];
      }
      LtProduct one = p;
      one.a = static_cast<const char*>(a->raw()) + ia * m * k * elem;
      one.b = static_cast<const char*>(b->raw()) + ib * k * n * elem;
      one.d = static_cast<char*>(y->mutable_raw()) + o * m * n * elem;
      RETURN_IF_ERROR(RunLtProduct(one, lane, ctx.node()));
    }
    return absl::OkStatus();
  }

 private:
  MatMul() = default;
};

class Gemm final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    RETURN_IF_ERROR(CheckMatMulNode(info));
    auto k = std::unique_ptr<Gemm>(new Gemm());
    k->trans_a_ = info.AttrOr<int64_t>("transA", 0) != 0;
    k->trans_b_ = info.AttrOr<int64_t>("transB", 0) != 0;
    k->alpha_ = info.AttrOr<float>("alpha", 1.f);
    k->beta_ = info.AttrOr<float>("beta", 1.f);
    auto activation = ParseActivation(info, {"Relu"});
    if (!activation.ok()) return activation.status();
    k->relu_ = !activation->empty();
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0));
    ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1));
    const Tensor* c = DeviceInput(ctx, 2);
    RETURN_IF_ERROR(CheckTypes(ctx, {a, b, c}));
    if (a->rank() != 2 || b->rank() != 2) {
      return ctx.Error(
          absl::StrCat("A ", DimsToString(a->dims()), " and B ", DimsToString(b->dims()), " must be matrices"));
    }
    const int64_t m = a->dims()[trans_a_ ? 1 : 0], k = a->dims()[trans_a_ ? 0 : 1];
    const int64_t kb = b->dims()[trans_b_ ? 1 : 0], n = b->dims()[trans_b_ ? 0 : 1];
    if (k != kb) return ctx.Error(absl::StrCat("A has K = ", k, ", B has K = ", kb));
    const Dims out_dims = {m, n};
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, a->type()));
    const CudaLane& lane = CurrentCudaLane();
    LtProduct p;
    p.type = a->type();
    p.trans_a = trans_a_, p.trans_b = trans_b_;
    p.m = m, p.n = n, p.k = k;
    p.alpha = alpha_;
    p.a = a->raw(), p.b = b->raw(), p.d = y->mutable_raw();
    p.epilogue = relu_ ? LtEpilogue::kRelu : LtEpilogue::kNone;
    if (c != nullptr && beta_ != 0.f && y->num_elements() > 0) {
      auto fits = BroadcastShape({c->dims(), out_dims});
      if (!fits.ok() || Dims(fits->begin(), fits->end()) != out_dims) {
        return ctx.Error(
            absl::StrCat("C ", DimsToString(c->dims()), " does not broadcast to ", DimsToString(out_dims)));
      }
      const bool row_bias =
          c->rank() >= 1 && c->num_elements() == n && c->dims().back() == n && (c->rank() == 1 || c->dims()[0] == 1);
      if (row_bias && beta_ == 1.f) {
        p.bias = c->raw();
      } else {
        // C broadcast into Y, then Y = alpha A B + beta Y in place.
        auto copy = MakeExpandCopy(c->dims(), out_dims);
        if (!copy.ok()) return ctx.Error(copy.status().message());
        size_t elem = ElementSize(c->type());
        WidenInnermost(*copy, elem, c->raw(), y->raw());
        RETURN_IF_ERROR(CheckIndexable(ctx, y->num_elements(), "the output"));
        RETURN_IF_ERROR(CheckLaunch(ctx, LaunchStridedCopy(elem, *copy, c->raw(), y->mutable_raw(), lane.stream)));
        p.c = y->raw();
        p.beta = beta_;
      }
    }
    return RunLtProduct(p, lane, ctx.node());
  }

 private:
  Gemm() = default;
  bool trans_a_ = false, trans_b_ = false, relu_ = false;
  float alpha_ = 1.f, beta_ = 1.f;
};

class FusedMatMul final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    RETURN_IF_ERROR(CheckMatMulNode(info));
    auto k = std::unique_ptr<FusedMatMul>(new FusedMatMul());
    ASSIGN_OR_RETURN(k->activation_, ParseActivation(info, {"Relu", "Gelu"}));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0));
    ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1));
    const Tensor* bias = DeviceInput(ctx, 2);
    RETURN_IF_ERROR(CheckTypes(ctx, {a, b, bias}));
    if (a->rank() < 1 || b->rank() != 2 || a->dims().back() != b->dims()[0] ||
        (bias != nullptr && bias->num_elements() != b->dims()[1])) {
      return ctx.Error(absl::StrCat("expects A [..., K], B [K, N] and bias [N]; received ", DimsToString(a->dims()),
                                    ", ", DimsToString(b->dims()), bias ? ", " + DimsToString(bias->dims()) : ""));
    }
    const int64_t k = b->dims()[0], n = b->dims()[1];
    Dims out_dims = a->dims();
    out_dims.back() = n;
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, a->type()));
    const CudaLane& lane = CurrentCudaLane();
    LtProduct p;
    p.type = a->type();
    p.m = NumElements(absl::MakeConstSpan(a->dims()).subspan(0, a->rank() - 1));
    p.n = n, p.k = k;
    p.a = a->raw(), p.b = b->raw(), p.d = y->mutable_raw();
    p.bias = bias ? bias->raw() : nullptr;
    p.epilogue = activation_ == "Relu" ? LtEpilogue::kRelu : LtEpilogue::kNone;
    RETURN_IF_ERROR(RunLtProduct(p, lane, ctx.node()));
    if (activation_ != "Gelu") return absl::OkStatus();
    RETURN_IF_ERROR(CheckIndexable(ctx, y->num_elements(), "the output"));
    return CheckLaunch(ctx, LaunchUnary(UnaryOp::kGeluErf, y->type(), y->raw(), y->mutable_raw(), y->num_elements(),
                                        0.f, 0.f, lane.stream));
  }

 private:
  FusedMatMul() = default;
  std::string activation_;
};

}  // namespace

absl::Status CheckMatMulNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  const bool fused_gemm = n.domain == kOnyxDomain && n.op_type == "FusedGemm";
  const bool fused_matmul = n.domain == kOnyxDomain && n.op_type == "FusedMatMul";
  if (!fused_gemm && !fused_matmul) return absl::OkStatus();
  // No schema checks these com.onyx nodes' types.
  for (int i = 0; i < info.InputCount(); ++i) {
    const DataType t = info.InputType(i);
    if (t != DataType::kUndefined && !IsCudaFloat(t)) {
      return info.Error(
          absl::StrCat(n.op_type, " computes float and float16 on CUDA; input ", i, " is ", DataTypeName(t)));
    }
  }
  if (fused_gemm) return ParseActivation(info, {"Relu"}).status();
  return ParseActivation(info, {"Relu", "Gelu"}).status();
}

void RegisterMatMulKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("MatMul").Since(1).Types("T", kCudaFloatTypes).Build(), MatMul::Create);
  r.Register(KernelDefBuilder("Gemm").Since(7).Types("T", kCudaFloatTypes).Build(), Gemm::Create);
  r.Register(KernelDefBuilder("FusedGemm").Domain(kOnyxDomain).Build(), Gemm::Create);
  r.Register(KernelDefBuilder("FusedMatMul").Domain(kOnyxDomain).Build(), FusedMatMul::Create);
}

}  // namespace onyx::cuda_ops
