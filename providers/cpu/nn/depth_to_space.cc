// DepthToSpace (DCR and CRD modes) and SpaceToDepth on NCHW tensors of any
// element type: each is a reshape to 6-D, a transpose and a reshape back,
// done as one strided copy. Strings are not supported.
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/nn/nn_kernels.h"

namespace onyx {
namespace {

// Copies `in` viewed as `dims6` (row-major) permuted by `perm` into `out`.
void Transpose6(const Tensor& in, const int64_t dims6[6], const int perm[6], Tensor& out) {
  int64_t strides[6];
  strides[5] = 1;
  for (int d = 4; d >= 0; --d) strides[d] = strides[d + 1] * dims6[d + 1];
  int64_t od[6], os[6];
  for (int d = 0; d < 6; ++d) {
    od[d] = dims6[perm[d]];
    os[d] = strides[perm[d]];
  }
  const int64_t rows = od[0] * od[1] * od[2] * od[3] * od[4];
  auto copy = [&](auto tag) {
    using E = decltype(tag);  // an unsigned integer of the element's size
    const E* src = static_cast<const E*>(in.raw());
    E* dst = static_cast<E*>(out.mutable_raw());
    ParallelFor(rows, 64, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t rem = r, off = 0;
        for (int d = 4; d >= 0; --d) {
          off += (rem % od[d]) * os[d];
          rem /= od[d];
        }
        E* o = dst + r * od[5];
        for (int64_t i = 0; i < od[5]; ++i) o[i] = src[off + i * os[5]];
      }
    });
  };
  switch (ElementSize(in.type())) {
    case 1: copy(uint8_t{}); break;
    case 2: copy(uint16_t{}); break;
    case 4: copy(uint32_t{}); break;
    default: copy(uint64_t{}); break;
  }
}

template <bool kToSpace>
class SpaceDepth final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(int64_t block, info.Attr<int64_t>("blocksize"));
    if (block <= 0) return info.Error(absl::StrCat("attribute 'blocksize' must be positive, received ", block));
    const std::string mode = info.AttrOr<std::string>("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") return info.Error("attribute 'mode' must be DCR or CRD, received " + mode);
    return std::unique_ptr<OpKernel>(new SpaceDepth(block, mode == "CRD"));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "input"));
    if (x->rank() != 4) return ctx.Error("input must be 4-D, received " + DimsToString(x->dims()));
    if (x->type() == DataType::kString) return ctx.Error("string tensors are not supported");
    const int64_t n = x->dims()[0], c = x->dims()[1], h = x->dims()[2], w = x->dims()[3], b = block_;
    if (kToSpace) {
      if (c % (b * b) != 0) return ctx.Error(absl::StrCat("channels ", c, " are not divisible by blocksize^2 = ", b * b));
      ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {n, c / (b * b), h * b, w * b}, x->type()));
      if (crd_) {
        const int64_t dims[6] = {n, c / (b * b), b, b, h, w};
        const int perm[6] = {0, 1, 4, 2, 5, 3};
        Transpose6(*x, dims, perm, *y);
      } else {
        const int64_t dims[6] = {n, b, b, c / (b * b), h, w};
        const int perm[6] = {0, 3, 4, 1, 5, 2};
        Transpose6(*x, dims, perm, *y);
      }
    } else {
      if (h % b != 0 || w % b != 0) {
        return ctx.Error(absl::StrCat("spatial dims ", h, "x", w, " are not divisible by blocksize ", b));
      }
      ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, {n, c * b * b, h / b, w / b}, x->type()));
      const int64_t dims[6] = {n, c, h / b, b, w / b, b};
      const int perm[6] = {0, 3, 5, 1, 2, 4};
      Transpose6(*x, dims, perm, *y);
    }
    return absl::OkStatus();
  }

 private:
  SpaceDepth(int64_t block, bool crd) : block_(block), crd_(crd) {}
  int64_t block_;
  bool crd_;
};

}  // namespace

void RegisterDepthToSpaceKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("DepthToSpace").Since(1).Build(), MakeFactory<SpaceDepth<true>>());
  r.Register(KernelDefBuilder("SpaceToDepth").Since(1).Build(), MakeFactory<SpaceDepth<false>>());
}

}  // namespace onyx
