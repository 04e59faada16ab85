// DeformConv-19 (and its type bump 22): a grouped convolution whose every
// kernel tap samples X at its regular position plus a learned offset (linear
// interpolation, zeros outside X), scaled by an optional mask. offset holds,
// per batch entry and offset group, r coordinates (outermost axis first: dy,
// dx in 2-D) for each of the K kernel taps at each output position; mask one
// value per tap and position. Input channels are split into offset_group
// equal groups, each with its own offsets. Any number of spatial dims (ONNX
// Runtime 1.30 takes 2 only). Per batch entry the sampled columns (C * K,
// positions) are built in the im2col scratch, then one gemm per group as
// Conv's im2col path does; float16/bfloat16 compute in float.
#include <algorithm>
#include <cmath>

#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_attributes.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

constexpr int kMaxSpatial = 8;

// Linear interpolation of `plane` (spatial dims `dims`, outermost first) at
// `pos`; positions outside contribute 0.
template <typename T>
T Interpolate(const T* plane, const int64_t* dims, int rank, const T* pos) {
  int64_t low[kMaxSpatial];
  T frac[kMaxSpatial];
  for (int d = 0; d < rank; ++d) {
    if (pos[d] <= T(-1) || pos[d] >= static_cast<T>(dims[d])) return T(0);
    const T f = std::floor(pos[d]);
    low[d] = static_cast<int64_t>(f);
    frac[d] = pos[d] - f;
  }
  T sum = 0;
  for (int corner = 0; corner < (1 << rank); ++corner) {
    T weight = 1;
    int64_t offset = 0;
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      const bool high = (corner >> (rank - 1 - d)) & 1;
      const int64_t p = low[d] + (high ? 1 : 0);
      inside &= p >= 0 && p < dims[d];
      offset = offset * dims[d] + p;
      weight *= high ? frac[d] : T(1) - frac[d];
    }
    if (inside) sum += weight * plane[offset];
  }
  return sum;
}

class DeformConv final : public OpKernel {
 public:
  explicit DeformConv(const OpKernelInfo& info)
      : attrs_(ConvAttributes::FromInfo(info)),
        group_(info.AttrOr<int64_t>("group", 1)),
        offset_group_(info.AttrOr<int64_t>("offset_group", 1)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* w_in, RequireInput(ctx, 1, "W"));
    ASSIGN_OR_RETURN(const Tensor* offset_in, RequireInput(ctx, 2, "offset"));
    const Tensor* b_in = ctx.Input(3);
    const Tensor* mask_in = ctx.Input(4);
    auto shape = ResolveConvShape(attrs_, group_, x_in->dims(), w_in->dims());
    if (!shape.ok()) return ctx.Error(shape.status().message());
    const ConvShape& s = *shape;
    const int rank = static_cast<int>(x_in->rank()) - 2;
    if (rank > kMaxSpatial) return ctx.Error(absl::StrCat("at most ", kMaxSpatial, " spatial dims are supported"));
    if (offset_group_ <= 0 || s.in_channels % offset_group_ != 0) {
      return ctx.Error(
          absl::StrCat("offset_group ", offset_group_, " does not divide X's ", s.in_channels, " channels"));
    }
    const int64_t taps = NumElements(s.geometry.kernel);
    Dims offset_dims = {s.batch, offset_group_ * taps * rank}, mask_dims = {s.batch, offset_group_ * taps};
    for (int64_t o : s.geometry.out) {
      offset_dims.push_back(o);
      mask_dims.push_back(o);
    }
    if (offset_in->dims() != offset_dims) {
      return ctx.Error(absl::StrCat("offset must be ", DimsToString(offset_dims), " (N, offset_group * taps * ", rank,
                                    ", output dims), received ", DimsToString(offset_in->dims())));
    }
    if (mask_in != nullptr && mask_in->dims() != mask_dims) {
      return ctx.Error(absl::StrCat("mask must be ", DimsToString(mask_dims), " (N, offset_group * taps, output dims)",
                                    ", received ", DimsToString(mask_in->dims())));
    }
    if (b_in != nullptr && b_in->num_elements() != s.out_channels) {
      return ctx.Error(absl::StrCat("B has ", b_in->num_elements(), " values, expected ", s.out_channels));
    }
    for (const Tensor* t : {w_in, offset_in, b_in, mask_in}) {
      if (t != nullptr && t->type() != x_in->type()) {
        return ctx.Error(absl::StrCat("X, W, offset, B and mask must share one type; X is ", DataTypeName(x_in->type()),
                                      ", another input ", DataTypeName(t->type())));
      }
    }
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, s.out_dims, x_in->type()));
    const bool half = IsHalfLike(x_in->type());
    Tensor y = half ? Tensor::Allocate(DataType::kFloat, s.out_dims) : *y_out;
    absl::Status status = DispatchList(FloatCompute{}, half ? DataType::kFloat : x_in->type(), [&](auto tag) {
      using T = decltype(tag);
      const Tensor x = UpcastToFloat(*x_in), w = UpcastToFloat(*w_in), offset = UpcastToFloat(*offset_in);
      const Tensor bias = b_in != nullptr ? UpcastToFloat(*b_in) : Tensor();
      const Tensor mask = mask_in != nullptr ? UpcastToFloat(*mask_in) : Tensor();
      return Run<T>(s, x.data<T>(), w.data<T>(), offset.data<T>(), b_in != nullptr ? bias.data<T>() : nullptr,
                    mask_in != nullptr ? mask.data<T>() : nullptr, y.mutable_data<T>());
    });
    if (!status.ok()) return ctx.Error(status.message());
    if (half) DowncastFromFloat(y, *y_out);
    return absl::OkStatus();
  }

 private:
  template <typename T>
  absl::Status Run(const ConvShape& s, const T* x, const T* w, const T* offset, const T* bias, const T* mask,
                   T* y) const {
    const SpatialGeometry& g = s.geometry;
    const int rank = static_cast<int>(g.in.size());
    const int64_t in_size = NumElements(g.in), out_size = NumElements(g.out), taps = NumElements(g.kernel);
    const int64_t channels = s.in_channels, per_offset_group = channels / offset_group_;
    const int64_t cin_g = channels / group_, cout_g = s.out_channels / group_;
    T* col = KernelScratch<T>(kScratchIm2Col, channels * taps * out_size);
    if (col == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate the ", channels * taps * out_size * sizeof(T), "-byte column buffer"));
    }
    for (int64_t n = 0; n < s.batch; ++n) {
      const T* image = x + n * channels * in_size;
      const T* off = offset + n * offset_group_ * taps * rank * out_size;
      const T* msk = mask != nullptr ? mask + n * offset_group_ * taps * out_size : nullptr;
      // Row (c, tap) of the columns holds channel c sampled for that tap at
      // every output position.
      ParallelFor(channels * taps, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, out_size)),
                  [&](int64_t begin, int64_t end) {
        int64_t k_idx[kMaxSpatial], o_idx[kMaxSpatial];
        T pos[kMaxSpatial];
        for (int64_t row = begin; row < end; ++row) {
          const int64_t c = row / taps, k = row % taps, og = c / per_offset_group;
          for (int64_t r = k, d = rank - 1; d >= 0; --d) {
            k_idx[d] = r % g.kernel[d];
            r /= g.kernel[d];
          }
          const T* tap_off = off + (og * taps + k) * rank * out_size;
          const T* tap_mask = msk != nullptr ? msk + (og * taps + k) * out_size : nullptr;
          T* dst = col + row * out_size;
          for (int64_t o = 0; o < out_size; ++o) {
            for (int64_t r = o, d = rank - 1; d >= 0; --d) {
              o_idx[d] = r % g.out[d];
              r /= g.out[d];
            }
            for (int d = 0; d < rank; ++d) {
              pos[d] = static_cast<T>(o_idx[d] * g.strides[d] - g.pad_begin[d] + k_idx[d] * g.dilations[d]) +
                       tap_off[d * out_size + o];
            }
            const T v = Interpolate(image + c * in_size, g.in.data(), rank, pos);
            dst[o] = tap_mask != nullptr ? v * tap_mask[o] : v;
          }
        }
      });
      for (int64_t gi = 0; gi < group_; ++gi) {
        T* out = y + (n * s.out_channels + gi * cout_g) * out_size;
        RETURN_IF_ERROR(GemmAny<T>(false, false, cout_g, out_size, cin_g * taps, w + gi * cout_g * cin_g * taps,
                                   cin_g * taps, col + gi * cin_g * taps * out_size, out_size, false, out, out_size));
      }
      if (bias != nullptr) {
        for (int64_t oc = 0; oc < s.out_channels; ++oc) {
          T* row = y + (n * s.out_channels + oc) * out_size;
          for (int64_t i = 0; i < out_size; ++i) row[i] += bias[oc];
        }
      }
    }
    return absl::OkStatus();
  }

  ConvAttributes attrs_;
  int64_t group_;
  int64_t offset_group_;
};

}  // namespace

void RegisterDeformConvKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("DeformConv").Since(19).Types("T", kFloatTypes).Build(), MakeFactory<DeformConv>());
}

}  // namespace onyx
