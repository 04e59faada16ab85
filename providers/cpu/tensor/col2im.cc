// Col2Im-18: the inverse of im2col. Input [N, C * prod(block), L] holds, for
// every block offset b and every one of the L block positions, one element
// of the image; each is added to the image element it was taken from
// (overlapping blocks sum; positions in the padding are dropped). The
// positions form a grid of ((image + pad_begin + pad_end - (dilation *
// (block - 1) + 1)) / stride + 1) per spatial axis, which L must equal.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

class Col2Im final : public OpKernel {
 public:
  explicit Col2Im(const OpKernelInfo& info)
      : dilations_(info.AttrOr<std::vector<int64_t>>("dilations", {})),
        pads_(info.AttrOr<std::vector<int64_t>>("pads", {})),
        strides_(info.AttrOr<std::vector<int64_t>>("strides", {})) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 3));
    const Tensor& x = *ctx.Input(0);
    std::vector<int64_t> image, block;
    for (auto [input, name, out] : {std::tuple{1, "input 'image_shape'", &image}, {2, "input 'block_shape'", &block}}) {
      absl::Status s = ReadInt64s(*ctx.Input(input), name, out);
      if (!s.ok()) return ctx.Error(s.message());
    }
    const size_t n = image.size();
    if (n == 0 || block.size() != n) {
      return ctx.Error(absl::StrCat("image_shape (", image.size(), " entries) and block_shape (", block.size(),
                                    " entries) must name the same, non-zero number of spatial axes"));
    }
    std::vector<int64_t> dilations = dilations_, pads = pads_, strides = strides_;
    if (dilations.empty()) dilations.assign(n, 1);
    if (strides.empty()) strides.assign(n, 1);
    if (pads.empty()) pads.assign(2 * n, 0);
    if (dilations.size() != n || strides.size() != n || pads.size() != 2 * n) {
      return ctx.Error(absl::StrCat("dilations, strides and pads need ", n, ", ", n, " and ", 2 * n, " entries for ", n,
                                    " spatial axes, received ", dilations.size(), ", ", strides.size(), " and ",
                                    pads.size()));
    }
    // Grid of block positions per axis, and the block's size.
    std::vector<int64_t> grid(n);
    int64_t block_size = 1, positions = 1;
    for (size_t d = 0; d < n; ++d) {
      if (image[d] < 0 || block[d] < 1 || dilations[d] < 1 || strides[d] < 1) {
        return ctx.Error(absl::StrCat("axis ", d, ": image ", image[d], ", block ", block[d], ", dilation ",
                                      dilations[d], ", stride ", strides[d], " must be positive"));
      }
      const int64_t span = dilations[d] * (block[d] - 1) + 1;
      grid[d] = (image[d] + pads[d] + pads[d + n] - span) / strides[d] + 1;
      if (image[d] + pads[d] + pads[d + n] < span) grid[d] = 0;
      block_size *= block[d];
      positions *= grid[d];
    }
    if (x.rank() != 3 || x.dims()[1] % block_size != 0 || x.dims()[2] != positions) {
      return ctx.Error(absl::StrCat("input ", DimsToString(x.dims()), " must be [N, C * ", block_size, ", ", positions,
                                    "] for image ", DimsToString(image), " and block ", DimsToString(block)));
    }
    const int64_t batch = x.dims()[0], channels = x.dims()[1] / block_size;
    Dims out_dims = {batch, channels};
    out_dims.insert(out_dims.end(), image.begin(), image.end());
    RETURN_IF_ERROR(CheckOutputDims(ctx, out_dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));  // zero-filled
    const int64_t image_size = NumElements(image);
    // For every (block offset, position) pair, the image element it adds to
    // (-1 when it falls in the padding); the same for every channel.
    std::vector<int64_t> target(block_size * positions);
    std::vector<int64_t> b(n, 0), p(n, 0);
    for (int64_t bi = 0; bi < block_size; ++bi) {
      std::fill(p.begin(), p.end(), 0);
      for (int64_t pi = 0; pi < positions; ++pi) {
        int64_t offset = 0;
        for (size_t d = 0; d < n && offset >= 0; ++d) {
          const int64_t at = p[d] * strides[d] - pads[d] + b[d] * dilations[d];
          offset = at < 0 || at >= image[d] ? -1 : offset * image[d] + at;
        }
        target[bi * positions + pi] = offset;
        Next(p, grid);
      }
      Next(b, block);
    }
    absl::Status s = DispatchTypes<float, double, int32_t, int64_t, Half, BFloat16>(x.type(), [&](auto tag) {
      using T = decltype(tag);
      using C = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
      const T* src = x.data<T>();
      T* dst = y->mutable_data<T>();
      ParallelFor(batch * channels, 1, [&](int64_t begin, int64_t end) {
        std::vector<C> acc(image_size);
        for (int64_t nc = begin; nc < end; ++nc) {
          std::fill(acc.begin(), acc.end(), C(0));
          const T* in = src + nc * block_size * positions;
          for (int64_t k = 0; k < block_size * positions; ++k) {
            if (target[k] < 0) continue;
            if constexpr (std::is_same_v<C, T>) acc[target[k]] += in[k];
            else acc[target[k]] += ToFloat(in[k]);
          }
          T* out = dst + nc * image_size;
          for (int64_t i = 0; i < image_size; ++i) {
            if constexpr (std::is_same_v<T, Half>) out[i] = Half{FloatToHalf(acc[i])};
            else if constexpr (std::is_same_v<T, BFloat16>) out[i] = BFloat16{FloatToBFloat16(acc[i])};
            else out[i] = acc[i];
          }
        }
      });
      return absl::OkStatus();
    });
    return s.ok() ? s : ctx.Error(s.message());
  }

 private:
  // Advances the row-major multi-index `i` within `dims` (wrapping at the end).
  static void Next(std::vector<int64_t>& i, const std::vector<int64_t>& dims) {
    for (size_t d = i.size(); d-- > 0;) {
      if (++i[d] < dims[d]) return;
      i[d] = 0;
    }
  }

  std::vector<int64_t> dilations_, pads_, strides_;  // empty: 1s, 0s, 1s
};

}  // namespace

void RegisterCol2ImKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Col2Im").Since(18, 18).Build(), MakeFactory<Col2Im>());
}

}  // namespace onyx
