#include "providers/cpu/contrib/qlinear_util.h"

#include "absl/strings/str_cat.h"

namespace onyx {

absl::StatusOr<QuantParams> ReadQuantParams(const OpKernelContext& ctx, int data_input, int scale_input, int zp_input) {
  QuantParams p;
  const Tensor* scale = scale_input < ctx.InputCount() ? ctx.Input(scale_input) : nullptr;
  if (scale == nullptr || scale->type() != DataType::kFloat || scale->num_elements() != 1) {
    return ctx.Error(absl::StrCat(
        "input ", scale_input, " (a scale) must be one float",
        scale ? ", received " + std::string(DataTypeName(scale->type())) + " " + DimsToString(scale->dims())
              : std::string(", but is omitted")));
  }
  p.scale = scale->data<float>()[0];
  const Tensor* zp = zp_input < ctx.InputCount() ? ctx.Input(zp_input) : nullptr;
  if (zp == nullptr) return p;
  const Tensor* data = ctx.Input(data_input);
  if (zp->num_elements() != 1 || (data != nullptr && zp->type() != data->type())) {
    return ctx.Error(absl::StrCat("input ", zp_input, " (a zero point) must be one value of input ", data_input,
                                  "'s element type, received ", DataTypeName(zp->type()), " ",
                                  DimsToString(zp->dims())));
  }
  p.zero_point = zp->type() == DataType::kInt8 ? zp->data<int8_t>()[0] : zp->data<uint8_t>()[0];
  return p;
}

}  // namespace onyx
