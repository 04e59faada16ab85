// Scatter (deprecated alias), ScatterElements and ScatterND, with the
// reductions none / add / mul (and max / min, which opset 18 adds). The output
// starts as a copy of data; updates apply in index order, so duplicates
// resolve as in the reference implementation.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/gather_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

absl::StatusOr<Reduction> ParseReduction(const OpKernelInfo& info) {
  const std::string r = info.AttrOr<std::string>("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return info.Error(absl::StrCat("reduction '", r, "' is not one of none, add, mul, max, min"));
}

template <typename T>
inline T Reduce(Reduction r, T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    const float x = ToFloat(a), y = ToFloat(b);
    const float v = r == Reduction::kAdd   ? x + y
                    : r == Reduction::kMul ? x * y
                    : r == Reduction::kMax ? std::max(x, y)
                                           : std::min(x, y);
    if constexpr (std::is_same_v<T, Half>) return Half{FloatToHalf(v)};
    else return BFloat16{FloatToBFloat16(v)};
  } else {
    switch (r) {
      case Reduction::kAdd: return static_cast<T>(a + b);
      case Reduction::kMul: return static_cast<T>(a * b);
      case Reduction::kMax: return std::max(a, b);
      case Reduction::kMin: return std::min(a, b);
      case Reduction::kNone: return b;
    }
    return b;
  }
}

// Applies updates[i] to out[offset_of(i)] for i in [0, n) (slices of `slice`
// elements each for ScatterND).
template <typename OffsetFn>
absl::Status ApplyUpdates(Reduction reduction, const Tensor& updates, Tensor& out, int64_t n, int64_t slice,
                          OffsetFn&& offset_of) {
  if (reduction == Reduction::kNone) {
    for (int64_t i = 0; i < n; ++i) {
      CopyElements(out.type(), updates.raw(), i * slice, out.mutable_raw(), offset_of(i), slice);
    }
    return absl::OkStatus();
  }
  return DispatchTypes<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, Half,
                       BFloat16>(out.type(), [&](auto tag) {
    using T = decltype(tag);
    const T* u = updates.data<T>();
    T* o = out.mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      T* dst = o + offset_of(i);
      const T* src = u + i * slice;
      for (int64_t j = 0; j < slice; ++j) dst[j] = Reduce(reduction, dst[j], src[j]);
    }
    return absl::OkStatus();
  });
}

class ScatterElements final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(Reduction r, ParseReduction(info));
    return std::unique_ptr<OpKernel>(new ScatterElements(info.AttrOr<int64_t>("axis", 0), r));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 3));
    const Tensor& data = *ctx.Input(0);
    const Tensor& indices = *ctx.Input(1);
    const Tensor& updates = *ctx.Input(2);
    if (updates.dims() != indices.dims() || updates.type() != data.type()) {
      return ctx.Error(absl::StrCat("updates (", DataTypeName(updates.type()), " ", DimsToString(updates.dims()),
                                    ") must match indices ", DimsToString(indices.dims()), " and data type ",
                                    DataTypeName(data.type())));
    }
    auto created = ElementsIndexing::Create(data, indices, axis_);
    if (!created.ok()) return ctx.Error(created.status().message());
    const ElementsIndexing& ix = *created;
    std::vector<int64_t> idx;
    absl::Status s = NormalizedIndices(indices, data.dims()[ix.axis], "indices", &idx);
    if (!s.ok()) return ctx.Error(s.message());
    std::vector<int64_t> offsets(idx.size());
    ix.ForEach(idx, [&](int64_t i, int64_t off) { offsets[i] = off; });
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, data.dims(), data.type()));
    CopyElements(data.type(), data.raw(), 0, y->mutable_raw(), 0, data.num_elements());
    s = ApplyUpdates(reduction_, updates, *y, static_cast<int64_t>(offsets.size()), 1,
                     [&](int64_t i) { return offsets[i]; });
    return s.ok() ? s : ctx.Error(s.message());
  }

 private:
  ScatterElements(int64_t axis, Reduction r) : axis_(axis), reduction_(r) {}
  int64_t axis_;
  Reduction reduction_;
};

class ScatterND final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(Reduction r, ParseReduction(info));
    return std::unique_ptr<OpKernel>(new ScatterND(r));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 3));
    const Tensor& data = *ctx.Input(0);
    const Tensor& indices = *ctx.Input(1);
    const Tensor& updates = *ctx.Input(2);
    auto created = NdIndexing::Create(data, indices, 0);
    if (!created.ok()) return ctx.Error(created.status().message());
    const NdIndexing& ix = *created;
    Dims expected(indices.dims().begin(), indices.dims().end() - 1);
    expected.insert(expected.end(), data.dims().begin() + ix.depth, data.dims().end());
    if (updates.dims() != expected || updates.type() != data.type()) {
      return ctx.Error(absl::StrCat("updates are ", DataTypeName(updates.type()), " ", DimsToString(updates.dims()),
                                    ", expected ", DataTypeName(data.type()), " ", DimsToString(expected)));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, data.dims(), data.type()));
    CopyElements(data.type(), data.raw(), 0, y->mutable_raw(), 0, data.num_elements());
    absl::Status s =
        ApplyUpdates(reduction_, updates, *y, ix.count(), ix.slice_size, [&](int64_t i) { return ix.offsets[i]; });
    return s.ok() ? s : ctx.Error(s.message());
  }

 private:
  explicit ScatterND(Reduction r) : reduction_(r) {}
  Reduction reduction_;
};

}  // namespace

void RegisterScatterKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Scatter").Since(9, 10).Build(), MakeFactory<ScatterElements>());
  r.Register(KernelDefBuilder("ScatterElements").Since(11, 18).Build(), MakeFactory<ScatterElements>());
  r.Register(KernelDefBuilder("ScatterND").Since(11, 18).Build(), MakeFactory<ScatterND>());
}

}  // namespace onyx
