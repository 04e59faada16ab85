// Selection by a boolean condition: Where (three-way broadcast), Compress
// (keep slices along an axis), NonZero (coordinates of non-zero elements).
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

class Where final : public OpKernel {
 public:
  explicit Where(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 3));
    const Tensor& c = *ctx.Input(0);
    const Tensor& x = *ctx.Input(1);
    const Tensor& y = *ctx.Input(2);
    if (c.type() != DataType::kBool || x.type() != y.type()) {
      return ctx.Error(absl::StrCat("expected a bool condition and X, Y of one type, received ",
                                    DataTypeName(c.type()), ", ", DataTypeName(x.type()), ", ",
                                    DataTypeName(y.type())));
    }
    auto cx = BroadcastShape(c.dims(), x.dims());
    if (!cx.ok()) return ctx.Error(cx.status().message());
    auto dims = BroadcastShape(*cx, y.dims());
    if (!dims.ok()) return ctx.Error(dims.status().message());
    ASSIGN_OR_RETURN(Tensor* out, ctx.Output(0, *dims, x.type()));
    const int64_t rank = static_cast<int64_t>(dims->size());
    const auto cs = BroadcastStrides(c.dims(), *dims), xs = BroadcastStrides(x.dims(), *dims),
               ys = BroadcastStrides(y.dims(), *dims);
    const int64_t inner = rank == 0 ? 1 : (*dims)[rank - 1];
    if (inner == 0 || out->num_elements() == 0) return absl::OkStatus();
    const int64_t rows = out->num_elements() / inner;
    const int64_t c_step = rank == 0 ? 0 : cs[rank - 1], x_step = rank == 0 ? 0 : xs[rank - 1],
                  y_step = rank == 0 ? 0 : ys[rank - 1];
    return DispatchStorage(x.type(), [&](auto tag) {
      using E = decltype(tag);
      const bool* pc = c.data<bool>();
      const E* px = x.data<E>();
      const E* py = y.data<E>();
      E* po = out->mutable_data<E>();
      ParallelFor(rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t rem = r, co = 0, xo = 0, yo = 0;
          for (int64_t a = rank - 2; a >= 0; --a) {
            const int64_t i = rem % (*dims)[a];
            rem /= (*dims)[a];
            co += i * cs[a];
            xo += i * xs[a];
            yo += i * ys[a];
          }
          E* o = po + r * inner;
          for (int64_t k = 0; k < inner; ++k) {
            o[k] = pc[co + k * c_step] ? px[xo + k * x_step] : py[yo + k * y_step];
          }
        }
      });
      return absl::OkStatus();
    });
  }
};

class Compress final : public OpKernel {
 public:
  explicit Compress(const OpKernelInfo& info)
      : has_axis_(info.HasAttr("axis")), axis_(info.AttrOr<int64_t>("axis", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    const Tensor& cond = *ctx.Input(1);
    if (cond.type() != DataType::kBool || cond.rank() != 1) {
      return ctx.Error(absl::StrCat("condition must be a 1-D bool tensor, received ", DataTypeName(cond.type()), " ",
                                    DimsToString(cond.dims())));
    }
    int64_t axis = axis_;
    Dims dims = x.dims();
    if (!has_axis_) {
      dims = {x.num_elements()};
      axis = 0;
    } else if (!NormalizeAxis(axis, x.rank())) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", x.rank()));
    }
    const int64_t extent = dims[axis];
    if (cond.num_elements() > extent) {
      return ctx.Error(absl::StrCat("condition has ", cond.num_elements(), " entries but axis ", axis, " has size ",
                                    extent));
    }
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < cond.num_elements(); ++i) {
      if (cond.data<bool>()[i]) kept.push_back(i);
    }
    Dims out_dims = dims;
    out_dims[axis] = static_cast<int64_t>(kept.size());
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= dims[a];
    for (int64_t a = axis + 1; a < static_cast<int64_t>(dims.size()); ++a) inner *= dims[a];
    const int64_t n = static_cast<int64_t>(kept.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        CopyElements(x.type(), x.raw(), (o * extent + kept[j]) * inner, y->mutable_raw(), (o * n + j) * inner, inner);
      }
    }
    return absl::OkStatus();
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

class NonZero final : public OpKernel {
 public:
  explicit NonZero(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    std::vector<int64_t> flat;
    RETURN_IF_ERROR((DispatchTypes<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                                  uint32_t, uint64_t, bool>(x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* p = x.data<T>();
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        bool nz;
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) nz = ToFloat(p[i]) != 0.0f;
        else nz = p[i] != T(0);
        if (nz) flat.push_back(i);
      }
      return absl::OkStatus();
    })));
    const int64_t rank = x.rank(), n = static_cast<int64_t>(flat.size());
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {rank, n}, DataType::kInt64));
    int64_t* out = y->mutable_data<int64_t>();
    for (int64_t j = 0; j < n; ++j) {
      int64_t rem = flat[j];
      for (int64_t a = rank - 1; a >= 0; --a) {
        out[a * n + j] = rem % x.dims()[a];
        rem /= x.dims()[a];
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterWhereKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Where").Since(9).Build(), MakeFactory<Where>());
  r.Register(KernelDefBuilder("Compress").Since(9).Build(), MakeFactory<Compress>());
  r.Register(KernelDefBuilder("NonZero").Since(9).Build(), MakeFactory<NonZero>());
}

}  // namespace onyx
