// com.onyx NhwcChannelShuffle (group g): X [N, H, W, C] -> Y of the same shape
// with each pixel's channels shuffled as ShuffleNet's Reshape [N, g, C/g, H, W]
// -> Transpose (0, 2, 1, 3, 4) -> Reshape does it channels first:
//   Y[n, h, w, j * g + i] = X[n, h, w, i * (C / g) + j],  i < g, j < C / g.
// Any element type of 1, 2, 4 or 8 bytes; pixels split across threads.
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/nhwc/nhwc_kernels.h"

namespace onyx {
namespace {

template <typename T>
void Shuffle(const T* x, T* y, int64_t pixels, int64_t channels, int64_t groups) {
  const int64_t per_group = channels / groups;
  ParallelFor(pixels, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, channels)), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* src = x + p * channels;
      T* dst = y + p * channels;
      if (groups == 2) {  // ShuffleNetV2's: interleave the two halves
        const T* hi = src + per_group;
        for (int64_t j = 0; j < per_group; ++j) {
          dst[2 * j] = src[j];
          dst[2 * j + 1] = hi[j];
        }
        continue;
      }
      for (int64_t i = 0; i < groups; ++i) {
        for (int64_t j = 0; j < per_group; ++j) dst[j * groups + i] = src[i * per_group + j];
      }
    }
  });
}

class NhwcChannelShuffle final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(int64_t groups, info.Attr<int64_t>("group"));
    if (groups < 1) return info.Error(absl::StrCat("group must be at least 1, received ", groups));
    return std::unique_ptr<OpKernel>(new NhwcChannelShuffle(groups));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr || x->rank() != 4) return ctx.Error("X must be a tensor [N, H, W, C]");
    const int64_t channels = x->dims()[3];
    if (channels % groups_ != 0) {
      return ctx.Error(absl::StrCat("C = ", channels, " is not a multiple of group = ", groups_));
    }
    const size_t size = ElementSize(x->type());
    if (x->type() == DataType::kString || (size != 1 && size != 2 && size != 4 && size != 8)) {
      return ctx.Error(absl::StrCat("unsupported element type ", DataTypeName(x->type())));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.OutputForOverwrite(0, x->dims(), x->type()));
    const int64_t pixels = channels == 0 ? 0 : x->num_elements() / channels;
    if (pixels == 0) return absl::OkStatus();
    switch (size) {
      case 1:
        Shuffle(static_cast<const uint8_t*>(x->raw()), static_cast<uint8_t*>(y->mutable_raw()), pixels, channels,
                groups_);
        break;
      case 2:
        Shuffle(static_cast<const uint16_t*>(x->raw()), static_cast<uint16_t*>(y->mutable_raw()), pixels, channels,
                groups_);
        break;
      case 4:
        Shuffle(static_cast<const uint32_t*>(x->raw()), static_cast<uint32_t*>(y->mutable_raw()), pixels, channels,
                groups_);
        break;
      default:
        Shuffle(static_cast<const uint64_t*>(x->raw()), static_cast<uint64_t*>(y->mutable_raw()), pixels, channels,
                groups_);
    }
    return absl::OkStatus();
  }

 private:
  explicit NhwcChannelShuffle(int64_t groups) : groups_(groups) {}
  int64_t groups_;
};

}  // namespace

void RegisterNhwcChannelShuffleKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("NhwcChannelShuffle").Domain(kOnyxDomain).Build(), MakeFactory<NhwcChannelShuffle>());
}

}  // namespace onyx
