// ConvTranspose (N-D, groups, dilations, pads, output_padding, output_shape,
// auto_pad): per image and group one gemm W^T * X gives the columns, which
// Col2Im scatters into the output. double computes natively; float16/bfloat16
// compute in float.
#include "onyx/status_macros.h"
#include "framework/op_kernel.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/conv_attributes.h"
#include "providers/cpu/nn/conv_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

class ConvTranspose final : public OpKernel {
 public:
  explicit ConvTranspose(const OpKernelInfo& info)
      : attrs_(ConvAttributes::FromInfo(info)),
        group_(info.AttrOr<int64_t>("group", 1)),
        output_padding_(info.AttrOr<std::vector<int64_t>>("output_padding", {})),
        output_shape_(info.AttrOr<std::vector<int64_t>>("output_shape", {})) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x_in, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* w_in, RequireInput(ctx, 1, "W"));
    const Tensor* b_in = ctx.Input(2);
    if (x_in->rank() < 3 || w_in->rank() != x_in->rank()) {
      return ctx.Error(absl::StrCat("X ", DimsToString(x_in->dims()), " and W ", DimsToString(w_in->dims()),
                                    " must have the same rank >= 3"));
    }
    const int64_t batch = x_in->dims()[0], in_c = x_in->dims()[1];
    if (group_ <= 0 || in_c % group_ != 0 || w_in->dims()[0] != in_c) {
      return ctx.Error(absl::StrCat("channels do not match: X has ", in_c, ", W ", DimsToString(w_in->dims()),
                                    ", group ", group_));
    }
    const int64_t cout_g = w_in->dims()[1], out_c = cout_g * group_, cin_g = in_c / group_;
    if (b_in != nullptr && b_in->num_elements() != out_c) {
      return ctx.Error(absl::StrCat("bias has ", b_in->num_elements(), " values, expected ", out_c));
    }
    ASSIGN_OR_RETURN(SpatialGeometry g, Geometry(ctx, *x_in, *w_in));
    // g describes the adjoint convolution: g.in is this op's output, g.out its input.
    Dims out_dims = {batch, out_c};
    for (int64_t d : g.in) out_dims.push_back(d);
    const Tensor x = UpcastToFloat(*x_in), w = UpcastToFloat(*w_in);
    const Tensor bias = b_in != nullptr ? UpcastToFloat(*b_in) : Tensor();
    if (x.type() != w.type() || (b_in != nullptr && bias.type() != x.type())) {
      return ctx.Error(absl::StrCat("X, W and B types differ: ", DataTypeName(x_in->type()), " and ",
                                    DataTypeName(w_in->type())));
    }
    ASSIGN_OR_RETURN(Tensor* y_out, ctx.Output(0, out_dims, x_in->type()));
    Tensor y = IsHalfLike(x_in->type()) ? Tensor::Allocate(DataType::kFloat, out_dims) : *y_out;
    const int64_t in_size = NumElements(g.out), out_size = NumElements(g.in), kernel_size = NumElements(g.kernel);
    RETURN_IF_ERROR(DispatchList(FloatCompute{}, x.type(), [&](auto tag) -> absl::Status {
      using T = decltype(tag);
      const T *px = x.data<T>(), *pw = w.data<T>();
      T* py = y.mutable_data<T>();
      T* col = KernelScratch<T>(kScratchIm2Col, cout_g * kernel_size * in_size);
      if (col == nullptr) {
        return absl::ResourceExhaustedError(absl::StrCat("cannot allocate the ", cout_g * kernel_size * in_size * sizeof(T),
                                                         "-byte col2im buffer"));
      }
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t gi = 0; gi < group_; ++gi) {
          T* image = py + (n * out_c + gi * cout_g) * out_size;
          const T b0 = T(0);
          for (int64_t c = 0; c < cout_g; ++c) {
            const T bv = b_in != nullptr ? bias.data<T>()[gi * cout_g + c] : b0;
            std::fill(image + c * out_size, image + (c + 1) * out_size, bv);
          }
          // col [cout_g * K, in_size] = W_g^T [cout_g * K, cin_g] * X_g [cin_g, in_size]
          RETURN_IF_ERROR(GemmAny<T>(true, false, cout_g * kernel_size, in_size, cin_g,
                                     pw + gi * cin_g * cout_g * kernel_size, cout_g * kernel_size,
                                     px + (n * in_c + gi * cin_g) * in_size, in_size, false, col, in_size));
          Col2Im(col, cout_g, g, image);
        }
      }
      return absl::OkStatus();
    }));
    if (IsHalfLike(x_in->type())) DowncastFromFloat(y, *y_out);
    return absl::OkStatus();
  }

 private:
  // Resolves strides, dilations, pads (explicit, from output_shape, or auto_pad)
  // into the geometry of the adjoint convolution.
  absl::StatusOr<SpatialGeometry> Geometry(const OpKernelContext& ctx, const Tensor& x, const Tensor& w) const {
    const size_t rank = x.rank() - 2;
    SpatialGeometry g;
    g.out.assign(x.dims().begin() + 2, x.dims().end());
    g.kernel.assign(w.dims().begin() + 2, w.dims().end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != g.kernel) {
      return ctx.Error("attribute 'kernel_shape' does not match the weights' spatial dims " + DimsToString(g.kernel));
    }
    auto sized = [&](const std::vector<int64_t>& v, size_t n, int64_t fill, const char* name) -> absl::StatusOr<std::vector<int64_t>> {
      if (v.empty()) return std::vector<int64_t>(n, fill);
      if (v.size() != n) {
        return ctx.Error(absl::StrCat("attribute '", name, "' has ", v.size(), " values, expected ", n));
      }
      return v;
    };
    ASSIGN_OR_RETURN(g.strides, sized(attrs_.strides, rank, 1, "strides"));
    ASSIGN_OR_RETURN(g.dilations, sized(attrs_.dilations, rank, 1, "dilations"));
    ASSIGN_OR_RETURN(std::vector<int64_t> out_pad, sized(output_padding_, rank, 0, "output_padding"));
    ASSIGN_OR_RETURN(std::vector<int64_t> pads, sized(attrs_.pads, 2 * rank, 0, "pads"));
    std::vector<int64_t> out_shape = output_shape_;
    if (out_shape.size() == rank + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (!out_shape.empty() && out_shape.size() != rank) {
      return ctx.Error(absl::StrCat("attribute 'output_shape' has ", output_shape_.size(), " values, expected ", rank));
    }
    const bool same = attrs_.auto_pad == "SAME_UPPER" || attrs_.auto_pad == "SAME_LOWER";
    if (!same && attrs_.auto_pad != "NOTSET" && attrs_.auto_pad != "VALID") {
      return ctx.Error("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, received '" + attrs_.auto_pad + "'");
    }
    g.in.resize(rank);
    g.pad_begin.resize(rank);
    g.pad_end.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
      if (g.strides[i] <= 0 || g.dilations[i] <= 0 || g.kernel[i] <= 0) {
        return ctx.Error(absl::StrCat("strides, dilations and kernel must be positive (dimension ", i, ")"));
      }
      const int64_t effective = (g.kernel[i] - 1) * g.dilations[i] + 1;
      const int64_t full = g.strides[i] * (g.out[i] - 1) + out_pad[i] + effective;
      if (!out_shape.empty() || same) {
        const int64_t target = !out_shape.empty() ? out_shape[i] : g.out[i] * g.strides[i];
        const int64_t total = full - target;
        // A negative total (output larger than the full result) pads at the end.
        const bool upper = attrs_.auto_pad == "SAME_UPPER";
        g.pad_begin[i] = total < 0 ? 0 : (upper ? total / 2 : total - total / 2);
        g.pad_end[i] = total - g.pad_begin[i];
        g.in[i] = target;
      } else {
        if (attrs_.auto_pad != "VALID") {
          g.pad_begin[i] = pads[i];
          g.pad_end[i] = pads[i + rank];
        }
        g.in[i] = full - g.pad_begin[i] - g.pad_end[i];
      }
      if (g.in[i] <= 0) {
        return ctx.Error(absl::StrCat("output dimension ", i, " would be ", g.in[i]));
      }
    }
    return g;
  }

  ConvAttributes attrs_;
  int64_t group_;
  std::vector<int64_t> output_padding_;
  std::vector<int64_t> output_shape_;
};

}  // namespace

void RegisterConvTransposeKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("ConvTranspose").Since(1).Types("T", kFloatTypes).Build(),
             MakeFactory<ConvTranspose>());
}

}  // namespace onyx
