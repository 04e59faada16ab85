// Pad: constant (fill, then one strided copy of the kept region), reflect,
// edge and wrap (a per-axis coordinate map). Pads come from the attribute
// before opset 11 and from inputs after; from 18 an optional `axes` input
// names the axes they apply to. Negative pads crop.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/cast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

class Pad final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const std::string mode = info.AttrOr<std::string>("mode", "constant");
    auto kernel = std::unique_ptr<Pad>(new Pad());
    if (mode == "constant") kernel->mode_ = PadMode::kConstant;
    else if (mode == "reflect") kernel->mode_ = PadMode::kReflect;
    else if (mode == "edge") kernel->mode_ = PadMode::kEdge;
    // wrap is Pad-19's; ONNX Runtime accepts it at every version, so do we.
    else if (mode == "wrap") kernel->mode_ = PadMode::kWrap;
    else return info.Error(absl::StrCat("mode '", mode, "' is not one of constant, reflect, edge, wrap"));
    kernel->from_attrs_ = info.node().since_version < 11;
    if (kernel->from_attrs_) {
      kernel->pads_ = info.AttrOr<std::vector<int64_t>>("pads", {});
      kernel->value_ = info.AttrOr<float>("value", 0.0f);
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    const int64_t rank = x.rank();
    std::vector<int64_t> pads = pads_;
    if (!from_attrs_) {
      RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
      absl::Status s = ReadInt64s(*ctx.Input(1), "input 'pads'", &pads);
      if (!s.ok()) return ctx.Error(s.message());
      if (ctx.node().since_version >= 18 && ctx.Input(3) != nullptr) RETURN_IF_ERROR(PadsForAxes(ctx, rank, &pads));
    }
    if (static_cast<int64_t>(pads.size()) != 2 * rank) {
      return ctx.Error(absl::StrCat("pads has ", pads.size(), " entries, expected ", 2 * rank, " for rank ", rank));
    }
    Dims out_dims(rank);
    for (int64_t a = 0; a < rank; ++a) {
      out_dims[a] = x.dims()[a] + pads[a] + pads[a + rank];
      if (out_dims[a] < 0) {
        return ctx.Error(absl::StrCat("pads ", DimsToString(pads), " crop axis ", a, " below zero"));
      }
      if (mode_ != PadMode::kConstant && KeptLength(x.dims()[a], pads[a], pads[a + rank]) == 0 && out_dims[a] > 0) {
        return ctx.Error(absl::StrCat("cannot pad the empty axis ", a, " in reflect/edge/wrap mode"));
      }
    }
    RETURN_IF_ERROR(CheckOutputDims(ctx, out_dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));
    if (y->num_elements() == 0) return absl::OkStatus();
    if (mode_ == PadMode::kConstant) return PadConstant(ctx, x, pads, *y);
    std::vector<std::vector<int64_t>> maps(rank);
    for (int64_t a = 0; a < rank; ++a) {
      const int64_t dim = x.dims()[a];
      maps[a].resize(out_dims[a]);
      for (int64_t o = 0; o < out_dims[a]; ++o) {
        int64_t i = o - pads[a];
        if (mode_ == PadMode::kWrap) {
          // Wraps around the kept region [crop_begin, dim - crop_end), as
          // ONNX Runtime does; numpy's pad(mode='wrap') when nothing is cropped.
          const int64_t crop_begin = std::max<int64_t>(-pads[a], 0);
          const int64_t kept = KeptLength(dim, pads[a], pads[a + rank]);
          i = crop_begin + (((i - crop_begin) % kept) + kept) % kept;
        } else if (mode_ == PadMode::kEdge || dim == 1) {
          i = std::clamp<int64_t>(i, 0, dim - 1);
        } else {
          const int64_t period = 2 * (dim - 1);
          i = ((i % period) + period) % period;
          if (i >= dim) i = period - i;
        }
        maps[a][o] = i;
      }
    }
    AxisMapCopy(x.type(), x.raw(), x.dims(), y->mutable_raw(), maps);
    return absl::OkStatus();
  }

 private:
  Pad() = default;

  // Elements of an axis of size `dim` left after negative pads crop it.
  static int64_t KeptLength(int64_t dim, int64_t begin, int64_t end) {
    return std::max<int64_t>(dim - std::max<int64_t>(-begin, 0) - std::max<int64_t>(-end, 0), 0);
  }

  // Pad-18's axes input: `pads` holds the begins then the ends of those axes
  // only; rewrites it to the full 2 * rank form, zero on the other axes.
  static absl::Status PadsForAxes(const OpKernelContext& ctx, int64_t rank, std::vector<int64_t>* pads) {
    std::vector<int64_t> axes;
    absl::Status s = ReadInt64s(*ctx.Input(3), "input 'axes'", &axes);
    if (!s.ok()) return ctx.Error(s.message());
    const size_t n = axes.size();
    if (pads->size() != 2 * n) {
      return ctx.Error(absl::StrCat("pads has ", pads->size(), " entries, expected ", 2 * n, " for ", n, " axes"));
    }
    std::vector<int64_t> full(2 * rank, 0);
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < n; ++i) {
      int64_t axis = axes[i];
      if (!NormalizeAxis(axis, rank)) {
        return ctx.Error(absl::StrCat("axes entry ", axes[i], " is out of range for rank ", rank));
      }
      if (seen[axis]) return ctx.Error(absl::StrCat("axes names axis ", axis, " more than once"));
      seen[axis] = true;
      full[axis] = (*pads)[i];
      full[axis + rank] = (*pads)[i + n];
    }
    *pads = std::move(full);
    return absl::OkStatus();
  }

  absl::Status PadConstant(OpKernelContext& ctx, const Tensor& x, const std::vector<int64_t>& pads, Tensor& y) const {
    const int64_t rank = x.rank();
    Tensor value = Tensor::Allocate(x.type(), {});
    if (from_attrs_) {
      ASSIGN_OR_RETURN(value, ScalarOf(x.type(), value_));
    } else if (const Tensor* v = ctx.Input(2)) {
      if (v->type() != x.type() || v->num_elements() != 1) {
        return ctx.Error(absl::StrCat("constant_value must be one ", DataTypeName(x.type()), " element, received ",
                                      DataTypeName(v->type()), " ", DimsToString(v->dims())));
      }
      value = *v;
    }
    FillElements(x.type(), value.raw(), y.mutable_raw(), y.num_elements());
    // The kept region: input [crop_begin, dim - crop_end) lands at output max(pad_begin, 0).
    const Dims in_strides = StridesOf(x.dims()), out_strides = StridesOf(y.dims());
    Dims region(rank);
    int64_t src_off = 0, dst_off = 0;
    for (int64_t a = 0; a < rank; ++a) {
      const int64_t begin = pads[a], end = pads[a + rank];
      const int64_t crop_begin = std::max<int64_t>(-begin, 0), crop_end = std::max<int64_t>(-end, 0);
      region[a] = std::max<int64_t>(x.dims()[a] - crop_begin - crop_end, 0);
      src_off += crop_begin * in_strides[a];
      dst_off += std::max<int64_t>(begin, 0) * out_strides[a];
    }
    if (NumElements(region) == 0) return absl::OkStatus();
    const size_t es = ElementSize(x.type());
    StridedCopy(x.type(), static_cast<const char*>(x.raw()) + src_off * es, in_strides,
                static_cast<char*>(y.mutable_raw()) + dst_off * es, out_strides, region);
    return absl::OkStatus();
  }

  PadMode mode_ = PadMode::kConstant;
  bool from_attrs_ = false;
  std::vector<int64_t> pads_;
  float value_ = 0.0f;
};

}  // namespace

void RegisterPadKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Pad").Since(2, 19).Build(), MakeFactory<Pad>());
}

}  // namespace onyx
