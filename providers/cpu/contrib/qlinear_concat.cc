// com.microsoft QLinearConcat(Y_scale, Y_zero_point, X0, X0_scale, X0_zp, X1,
// ...): Concat along `axis` with every input requantized to Y's parameters,
// byte by byte through a 256-entry table of quantize_Y(dequantize_Xi(x)), or
// copied when Xi's parameters equal Y's (as ONNX Runtime does).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/contrib/qlinear_util.h"
#include "providers/cpu/math/element_util.h"

namespace onyx {
namespace {

class QLinearConcat final : public OpKernel {
 public:
  explicit QLinearConcat(const OpKernelInfo& info) : axis_(info.AttrOr<int64_t>("axis", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const int count = ctx.InputCount();
    if (count < 5 || (count - 2) % 3 != 0) {
      return ctx.Error(
          absl::StrCat("inputs must be Y_scale, Y_zero_point, then (tensor, scale, zero point) per "
                       "input; received ",
                       count, " inputs"));
    }
    const Tensor* y_zp = ctx.Input(1);
    if (y_zp == nullptr || (y_zp->type() != DataType::kInt8 && y_zp->type() != DataType::kUint8)) {
      return ctx.Error("Y_zero_point must be int8 or uint8");
    }
    const DataType type = y_zp->type();
    ASSIGN_OR_RETURN(QuantParams py, ReadQuantParams(ctx, 1, 0, 1));
    const int inputs = (count - 2) / 3;
    const Tensor* first = ctx.Input(2);
    if (first == nullptr) return ctx.Error("input 2 (the first tensor) is required");
    auto axis = NormalizeAxis(axis_, first->rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    Dims out_dims = first->dims();
    out_dims[*axis] = 0;
    for (int i = 0; i < inputs; ++i) {
      const Tensor* x = ctx.Input(2 + 3 * i);
      bool fits = x != nullptr && x->type() == type && x->rank() == first->rank();
      for (int64_t d = 0; fits && d < x->rank(); ++d) fits = d == *axis || x->dims()[d] == first->dims()[d];
      if (!fits) {
        return ctx.Error(absl::StrCat("input ", 2 + 3 * i, " must be ", DataTypeName(type), " shaped like ",
                                      DimsToString(first->dims()), " except along axis ", *axis, ", received ",
                                      x ? DimsToString(x->dims()) : std::string("nothing")));
      }
      out_dims[*axis] += x->dims()[*axis];
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, type));
    const int64_t outer = NumElements(absl::MakeConstSpan(out_dims).subspan(0, *axis));
    const int64_t inner = NumElements(absl::MakeConstSpan(out_dims).subspan(*axis + 1));
    const int64_t out_pitch = out_dims[*axis] * inner;
    uint8_t* out = static_cast<uint8_t*>(y->mutable_raw());
    int64_t offset = 0;
    for (int i = 0; i < inputs; ++i) {
      const Tensor* x = ctx.Input(2 + 3 * i);
      ASSIGN_OR_RETURN(QuantParams px, ReadQuantParams(ctx, 1, 3 + 3 * i, 4 + 3 * i));
      if (ctx.Input(4 + 3 * i) == nullptr)
        return ctx.Error(absl::StrCat("input ", 4 + 3 * i, " (a zero point) is required"));
      const bool copy = px.scale == py.scale && px.zero_point == py.zero_point;
      uint8_t table[256];
      auto identity = [](float v) { return v; };
      if (type == DataType::kInt8) {
        BuildLookupTable<int8_t>(px, py, identity, table);
      } else {
        BuildLookupTable<uint8_t>(px, py, identity, table);
      }
      const int64_t pitch = x->dims()[*axis] * inner;
      const uint8_t* in = static_cast<const uint8_t*>(x->raw());
      for (int64_t o = 0; o < outer; ++o) {
        uint8_t* dst = out + o * out_pitch + offset;
        const uint8_t* src = in + o * pitch;
        if (copy) {
          std::memcpy(dst, src, pitch);
        } else {
          for (int64_t j = 0; j < pitch; ++j) dst[j] = table[src[j]];
        }
      }
      offset += pitch;
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterQLinearConcatKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("QLinearConcat").Domain(kMicrosoftDomain).Since(1).Build(), MakeFactory<QLinearConcat>());
}

}  // namespace onyx
