// Shape-only ops that reuse their input's buffer: Reshape, Flatten, Identity,
// Squeeze, Unsqueeze. Outputs share memory with the input (no copy).
#include "onyx/status_macros.h"
#include "framework/op_kernel.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class Reshape final : public OpKernel {
 public:
  explicit Reshape(const OpKernelInfo& info) : allow_zero_(info.AttrOr<int64_t>("allowzero", 0) != 0) {
    if (info.node().since_version < 5) shape_attr_ = info.AttrOr<std::vector<int64_t>>("shape", {});
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    std::vector<int64_t> requested = shape_attr_;
    if (const Tensor* shape = ctx.Input(1)) {
      if (shape->type() != DataType::kInt64 || shape->rank() != 1) {
        return ctx.Error("input 'shape' must be a 1-D int64 tensor, received " +
                         std::string(DataTypeName(shape->type())) + " " + DimsToString(shape->dims()));
      }
      requested.assign(shape->data<int64_t>(), shape->data<int64_t>() + shape->num_elements());
    }
    Dims out;
    int64_t infer = -1, known = 1;
    for (size_t i = 0; i < requested.size(); ++i) {
      int64_t d = requested[i];
      if (d == 0 && !allow_zero_) {
        if (i >= static_cast<size_t>(x.rank())) {
          return ctx.Error(absl::StrCat("shape[", i, "] is 0 (copy) but the input has rank ", x.rank()));
        }
        d = x.dims()[i];
      }
      if (d == -1) {
        if (infer >= 0) return ctx.Error("shape has more than one -1");
        infer = static_cast<int64_t>(i);
        out.push_back(1);
        continue;
      }
      if (d < 0) return ctx.Error(absl::StrCat("shape[", i, "] = ", d, " is invalid"));
      known *= d;
      out.push_back(d);
    }
    if (infer >= 0) {
      if (known == 0 || x.num_elements() % known != 0) {
        return ctx.Error(absl::StrCat("cannot infer -1 reshaping ", DimsToString(x.dims()), " to ",
                                      DimsToString(requested)));
      }
      out[infer] = x.num_elements() / known;
    }
    if (NumElements(out) != x.num_elements()) {
      return ctx.Error(absl::StrCat("cannot reshape ", DimsToString(x.dims()), " (", x.num_elements(),
                                    " elements) to ", DimsToString(out)));
    }
    ctx.SetOutput(0, Value(x.Reshaped(out)));
    return absl::OkStatus();
  }

 private:
  bool allow_zero_;
  std::vector<int64_t> shape_attr_;
};

class Flatten final : public OpKernel {
 public:
  explicit Flatten(const OpKernelInfo& info) : axis_(info.AttrOr<int64_t>("axis", 1)) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    int64_t axis = axis_ < 0 ? axis_ + x.rank() : axis_;
    if (axis < 0 || axis > x.rank()) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", x.rank()));
    }
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x.dims()[i];
    int64_t inner = 1;
    for (int64_t i = axis; i < x.rank(); ++i) inner *= x.dims()[i];
    ctx.SetOutput(0, Value(x.Reshaped({outer, inner})));
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

// Squeeze (remove=true) and Unsqueeze: axes come from the attribute before
// opset 13 and from input 1 after.
template <bool kSqueeze>
class AxesReshape final : public OpKernel {
 public:
  explicit AxesReshape(const OpKernelInfo& info)
      : axes_attr_(info.AttrOr<std::vector<int64_t>>("axes", {})), has_attr_(info.HasAttr("axes")) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    std::vector<int64_t> axes = axes_attr_;
    bool given = has_attr_;
    if (const Tensor* a = ctx.Input(1)) {
      absl::Status s = ReadInt64s(*a, "input 'axes'", &axes);
      if (!s.ok()) return ctx.Error(s.message());
      given = true;
    }
    const int64_t out_rank = kSqueeze ? x.rank() : x.rank() + static_cast<int64_t>(axes.size());
    const int64_t axis_rank = kSqueeze ? x.rank() : out_rank;
    std::vector<bool> marked(axis_rank, false);
    for (int64_t axis : axes) {
      int64_t a = axis;
      if (!NormalizeAxis(a, axis_rank)) {
        return ctx.Error(absl::StrCat("axis ", axis, " is out of range for rank ", axis_rank));
      }
      if (marked[a]) return ctx.Error(absl::StrCat("axis ", axis, " is repeated"));
      marked[a] = true;
    }
    Dims out;
    if (kSqueeze) {
      for (int64_t i = 0; i < x.rank(); ++i) {
        const int64_t d = x.dims()[i];
        if (given && marked[i] && d != 1) {
          return ctx.Error(absl::StrCat("cannot squeeze axis ", i, " of size ", d, " in ", DimsToString(x.dims())));
        }
        if ((given && marked[i]) || (!given && d == 1)) continue;
        out.push_back(d);
      }
    } else {
      for (int64_t i = 0, j = 0; i < out_rank; ++i) out.push_back(marked[i] ? 1 : x.dims()[j++]);
    }
    ctx.SetOutput(0, Value(x.Reshaped(out)));
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> axes_attr_;
  bool has_attr_;
};

class Identity final : public OpKernel {
 public:
  explicit Identity(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Value* v = ctx.InputValue(0);
    ctx.SetOutput(0, v != nullptr ? *v : Value());
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterReshapeKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Reshape").Since(1).Build(), MakeFactory<Reshape>());
  r.Register(KernelDefBuilder("Flatten").Since(1).Build(), MakeFactory<Flatten>());
  r.Register(KernelDefBuilder("Squeeze").Since(1).Build(), MakeFactory<AxesReshape<true>>());
  r.Register(KernelDefBuilder("Unsqueeze").Since(1).Build(), MakeFactory<AxesReshape<false>>());
  r.Register(KernelDefBuilder("Identity").Since(1).Build(), MakeFactory<Identity>());
}

}  // namespace onyx
