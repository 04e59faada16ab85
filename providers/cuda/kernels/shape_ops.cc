// Ops that change only the shape: Reshape, Flatten, Squeeze, Unsqueeze and
// Identity copy their input into the output (one device-to-device copy on the
// lane stream); shape-like inputs must be constant initializers. Shape writes
// the input's dims (int64) with a by-value fill, no host buffer.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

enum class ShapeOp { kReshape, kFlatten, kSqueeze, kUnsqueeze, kIdentity };

// The output dims of `op` for input dims x, or an error message.
absl::StatusOr<Dims> OutputDims(ShapeOp op, const Dims& x, const std::vector<int64_t>& values, int64_t axis,
                                bool allow_zero) {
  const int64_t rank = static_cast<int64_t>(x.size());
  switch (op) {
    case ShapeOp::kIdentity: return x;
    case ShapeOp::kFlatten: {
      int64_t a = axis < 0 ? axis + rank : axis;
      if (a < 0 || a > rank) return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range"));
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < rank; ++i) (i < a ? outer : inner) *= x[i];
      return Dims{outer, inner};
    }
    case ShapeOp::kReshape: {
      Dims out;
      int64_t infer = -1, known = 1;
      for (size_t i = 0; i < values.size(); ++i) {
        int64_t d = values[i];
        if (d == 0 && !allow_zero) {
          if (i >= x.size()) {
            return absl::InvalidArgumentError(absl::StrCat("shape[", i, "] is 0 (copy) but the input has rank ", rank));
          }
          d = x[i];
        }
        if (d == -1) {
          if (infer >= 0) return absl::InvalidArgumentError("shape has more than one -1");
          infer = static_cast<int64_t>(i);
          out.push_back(1);
          continue;
        }
        if (d < 0) return absl::InvalidArgumentError(absl::StrCat("shape[", i, "] = ", d, " is invalid"));
        known *= d;
        out.push_back(d);
      }
      if (infer >= 0) {
        if (known == 0 || NumElements(x) % known != 0) {
          return absl::InvalidArgumentError(absl::StrCat("cannot infer -1 reshaping ", DimsToString(x)));
        }
        out[infer] = NumElements(x) / known;
      }
      if (NumElements(out) != NumElements(x)) {
        return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", DimsToString(x), " to ", DimsToString(out)));
      }
      return out;
    }
    case ShapeOp::kSqueeze: {
      std::vector<bool> drop(rank, values.empty());
      if (values.empty()) {
        for (int64_t i = 0; i < rank; ++i) drop[i] = x[i] == 1;
      }
      for (int64_t a : values) {
        const int64_t given = a;
        if (!NormalizeAxis(a, rank))
          return absl::InvalidArgumentError(absl::StrCat("axis ", given, " is out of range"));
        if (x[a] != 1) {
          return absl::InvalidArgumentError(absl::StrCat("axis ", given, " of ", DimsToString(x), " is not 1"));
        }
        drop[a] = true;
      }
      Dims out;
      for (int64_t i = 0; i < rank; ++i) {
        if (!drop[i]) out.push_back(x[i]);
      }
      return out;
    }
    case ShapeOp::kUnsqueeze: {
      const int64_t out_rank = rank + static_cast<int64_t>(values.size());
      std::vector<bool> inserted(out_rank, false);
      for (int64_t a : values) {
        const int64_t given = a;
        if (!NormalizeAxis(a, out_rank) || inserted[a]) {
          return absl::InvalidArgumentError(absl::StrCat("axis ", given, " is out of range or repeated"));
        }
        inserted[a] = true;
      }
      Dims out;
      for (int64_t i = 0, next = 0; i < out_rank; ++i) out.push_back(inserted[i] ? 1 : x[next++]);
      return out;
    }
  }
  return x;
}

class ShapeOnly final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, ShapeOp op) {
    RETURN_IF_ERROR(CheckShapeNode(info));
    auto k = std::unique_ptr<ShapeOnly>(new ShapeOnly(op));
    const int version = info.node().since_version;
    k->axis_ = info.AttrOr<int64_t>("axis", 1);
    k->allow_zero_ = info.AttrOr<int64_t>("allowzero", 0) != 0;
    if (op == ShapeOp::kReshape) {
      if (version < 5) {
        k->values_ = info.AttrOr<std::vector<int64_t>>("shape", {});
      } else {
        const Tensor* shape = info.ConstantInput(1);
        if (shape == nullptr) return info.Error("input 1 ('shape') is missing");
        ASSIGN_OR_RETURN(k->values_, ReadInt64s(info, *shape, "shape"));
      }
    } else if (op == ShapeOp::kSqueeze || op == ShapeOp::kUnsqueeze) {
      if (version < 13) {
        k->values_ = info.AttrOr<std::vector<int64_t>>("axes", {});
      } else if (const Tensor* axes = info.ConstantInput(1)) {
        ASSIGN_OR_RETURN(k->values_, ReadInt64s(info, *axes, "axes"));
      }
    }
    RETURN_IF_ERROR(k->UploadConstantInputs(info, {1}));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    auto dims = OutputDims(op_, x->dims(), values_, axis_, allow_zero_);
    if (!dims.ok()) return ctx.Error(dims.status().message());
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, *dims, x->type()));
    if (x->byte_size() == 0) return absl::OkStatus();
    return CheckLaunch(ctx, cudaMemcpyAsync(y->mutable_raw(), x->raw(), x->byte_size(), cudaMemcpyDeviceToDevice,
                                            CurrentCudaLane().stream));
  }

 private:
  explicit ShapeOnly(ShapeOp op) : op_(op) {}
  ShapeOp op_;
  std::vector<int64_t> values_;  // Reshape's shape, (Un)Squeeze's axes
  int64_t axis_ = 1;             // Flatten
  bool allow_zero_ = false;      // Reshape-14
};

class Shape final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<Shape>(new Shape());
    k->start_ = info.AttrOr<int64_t>("start", 0);
    k->end_ = info.HasAttr("end") ? std::optional<int64_t>(info.AttrOr<int64_t>("end", 0)) : std::nullopt;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    // Only the dims are read, so a constant (host) input needs no upload.
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input 0 is missing or is not a tensor");
    const int64_t rank = x->rank();
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t begin = clamp(start_), end = clamp(end_.value_or(rank));
    const int64_t n = std::max<int64_t>(0, end - begin);
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, {n}, DataType::kInt64));
    const cudaStream_t stream = CurrentCudaLane().stream;
    for (int64_t i = 0; i < n; i += kMaxRank) {
      const int32_t count = static_cast<int32_t>(std::min<int64_t>(kMaxRank, n - i));
      RETURN_IF_ERROR(CheckLaunch(
          ctx, LaunchFillInt64(x->dims().data() + begin + i, count, y->mutable_data<int64_t>() + i, stream)));
    }
    return absl::OkStatus();
  }

 private:
  Shape() = default;
  int64_t start_ = 0;
  std::optional<int64_t> end_;
};

}  // namespace

absl::Status CheckShapeNode(const OpKernelInfo& info) {
  const Node& n = info.node();
  if (!n.domain.empty()) return absl::OkStatus();
  if (n.op_type == "Reshape" && n.since_version >= 5) {
    if (!info.HasInput(1)) return info.Error("input 1 ('shape') is missing");
    return RequireConstantInput(info, 1, "shape");
  }
  if ((n.op_type == "Squeeze" || n.op_type == "Unsqueeze") && n.since_version >= 13) {
    return RequireConstantInput(info, 1, "axes");
  }
  return absl::OkStatus();
}

void RegisterShapeKernels(KernelRegistry& r) {
  auto reg = [&r](const char* op, ShapeOp kind) {
    r.Register(KernelDefBuilder(op).Since(1).Types("T", kCudaCopyTypes).Types("V", kCudaCopyTypes).Build(),
               [kind](const OpKernelInfo& info) { return ShapeOnly::Create(info, kind); });
  };
  reg("Reshape", ShapeOp::kReshape);
  reg("Flatten", ShapeOp::kFlatten);
  reg("Squeeze", ShapeOp::kSqueeze);
  reg("Unsqueeze", ShapeOp::kUnsqueeze);
  reg("Identity", ShapeOp::kIdentity);
  r.Register(KernelDefBuilder("Shape").Since(1).Build(), Shape::Create);
}

}  // namespace onyx::cuda_ops
