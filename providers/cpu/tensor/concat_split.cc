// Concat and Split: both move contiguous runs of (axis extent x inner size)
// elements per outer index.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/simd/vector_math.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class Concat final : public OpKernel {
 public:
  explicit Concat(const OpKernelInfo& info) : axis_(info.AttrOr<int64_t>("axis", 1)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < ctx.InputCount(); ++i) {
      if (const Tensor* t = ctx.Input(i)) inputs.push_back(t);
    }
    if (inputs.empty()) return ctx.Error("no inputs");
    const Tensor& first = *inputs[0];
    const int64_t rank = first.rank();
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, rank)) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", rank));
    }
    Dims out_dims = first.dims();
    out_dims[axis] = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = *inputs[i];
      bool match = t.rank() == rank && t.type() == first.type();
      for (int64_t a = 0; match && a < rank; ++a) match = a == axis || t.dims()[a] == first.dims()[a];
      if (!match) {
        return ctx.Error(absl::StrCat("input ", i, " (", DataTypeName(t.type()), " ", DimsToString(t.dims()),
                                      ") does not match input 0 (", DataTypeName(first.type()), " ",
                                      DimsToString(first.dims()), ") outside axis ", axis));
      }
      out_dims[axis] += t.dims()[axis];
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, first.type()));
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= out_dims[a];
    for (int64_t a = axis + 1; a < rank; ++a) inner *= out_dims[a];
    const int64_t out_run = out_dims[axis] * inner;
    const int64_t n_in = static_cast<int64_t>(inputs.size());
    std::vector<int64_t> offsets(n_in + 1, 0);
    for (int64_t i = 0; i < n_in; ++i) offsets[i + 1] = offsets[i] + inputs[i]->dims()[axis] * inner;
    // One row (a Concat along the first non-unit axis): the inputs split
    // among the threads.
    if (outer == 1) {
      ParallelFor(n_in, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          CopyElements(first.type(), inputs[i]->raw(), 0, y->mutable_raw(), offsets[i], offsets[i + 1] - offsets[i]);
        }
      });
      return absl::OkStatus();
    }
    // Else each thread takes a block of output rows (the rows a parallel
    // producer wrote on that thread's core, so its caches hold them) and
    // copies it input by input: each source read front to back, where
    // alternating sources every short channels-last row defeats prefetching.
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, out_run));
    const bool four_bytes = first.type() != DataType::kString && ElementSize(first.type()) == 4;
    ParallelFor(outer, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = 0; i < n_in; ++i) {
        const int64_t run = offsets[i + 1] - offsets[i];
        if (four_bytes) {
          simd::CopyRows32(static_cast<const float*>(inputs[i]->raw()) + begin * run, end - begin, run,
                           static_cast<float*>(y->mutable_raw()) + begin * out_run + offsets[i], out_run);
          continue;
        }
        for (int64_t o = begin; o < end; ++o) {
          CopyElements(first.type(), inputs[i]->raw(), o * run, y->mutable_raw(), o * out_run + offsets[i], run);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

class Split final : public OpKernel {
 public:
  // Split-18 takes its sizes from exactly one of the split input and
  // num_outputs; ONNX's inference refuses neither and both, and so does ONNX
  // Runtime, so they are refused here rather than guessed at.
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto kernel = std::unique_ptr<Split>(new Split(info));
    if (info.node().since_version < 18) return std::unique_ptr<OpKernel>(std::move(kernel));
    const bool has_split = info.HasInput(1);
    if (info.HasAttr("num_outputs")) {
      kernel->num_outputs_ = info.AttrOr<int64_t>("num_outputs", 0);
      if (has_split) return info.Error("Split-18 has both the 'split' input and the 'num_outputs' attribute");
      if (kernel->num_outputs_ < 1) {
        return info.Error(absl::StrCat("num_outputs ", kernel->num_outputs_, " is lower than 1"));
      }
      if (kernel->num_outputs_ != info.OutputCount()) {
        return info.Error(absl::StrCat("num_outputs ", kernel->num_outputs_, " does not match the node's ",
                                       info.OutputCount(), " outputs"));
      }
    } else if (!has_split) {
      return info.Error("Split-18 has neither the 'split' input nor the 'num_outputs' attribute");
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    const int64_t rank = x.rank();
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, rank)) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", rank));
    }
    const int64_t n_out = ctx.OutputCount();
    const int64_t extent = x.dims()[axis];
    std::vector<int64_t> split = split_attr_;
    if (const Tensor* s = ctx.Input(1)) {
      absl::Status st = ReadInt64s(*s, "input 'split'", &split);
      if (!st.ok()) return ctx.Error(st.message());
    }
    if (split.empty() && num_outputs_ > 0) {
      RETURN_IF_ERROR(ChunksOf(ctx, extent, axis, &split));
    } else if (split.empty()) {
      if (extent % n_out != 0) {
        return ctx.Error(
            absl::StrCat("axis ", axis, " of size ", extent, " cannot be split evenly into ", n_out, " outputs"));
      }
      split.assign(n_out, extent / n_out);
    }
    int64_t sum = 0;
    for (int64_t s : split) {
      if (s < 0) return ctx.Error(absl::StrCat("split has a negative size ", s));
      sum += s;
    }
    if (static_cast<int64_t>(split.size()) != n_out || sum != extent) {
      return ctx.Error(absl::StrCat("split sizes (", split.size(), " entries, sum ", sum, ") do not match ", n_out,
                                    " outputs and axis size ", extent));
    }
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= x.dims()[a];
    for (int64_t a = axis + 1; a < rank; ++a) inner *= x.dims()[a];
    const int64_t in_run = extent * inner;
    int64_t offset = 0;
    for (int64_t i = 0; i < n_out; ++i) {
      Dims dims = x.dims();
      dims[axis] = split[i];
      ASSIGN_OR_RETURN(Tensor* y, ctx.Output(i, dims, x.type()));
      const int64_t run = split[i] * inner;
      ParallelFor(outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, run)), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          CopyElements(x.type(), x.raw(), o * in_run + offset, y->mutable_raw(), o * run, run);
        }
      });
      offset += run;
    }
    return absl::OkStatus();
  }

 private:
  explicit Split(const OpKernelInfo& info)
      : axis_(info.AttrOr<int64_t>("axis", 0)), split_attr_(info.AttrOr<std::vector<int64_t>>("split", {})) {}

  // Split-18's num_outputs: chunks of ceil(extent / n), the last one what is
  // left, which must not be empty (ONNX Runtime refuses that too).
  absl::Status ChunksOf(const OpKernelContext& ctx, int64_t extent, int64_t axis, std::vector<int64_t>* split) const {
    const int64_t chunk = (extent + num_outputs_ - 1) / num_outputs_;
    const int64_t last = extent - chunk * (num_outputs_ - 1);
    if (last <= 0) {
      return ctx.Error(absl::StrCat("axis ", axis, " of size ", extent, " cannot be split into ", num_outputs_,
                                    " chunks of ", chunk, " (the last would be empty)"));
    }
    split->assign(num_outputs_ - 1, chunk);
    split->push_back(last);
    return absl::OkStatus();
  }

  int64_t axis_;
  std::vector<int64_t> split_attr_;
  int64_t num_outputs_ = 0;  // 0 when absent (or before opset 18)
};

}  // namespace

void RegisterConcatSplitKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Concat").Since(1).Build(), MakeFactory<Concat>());
  r.Register(KernelDefBuilder("Split").Since(1, 18).Build(), MakeFactory<Split>());
}

}  // namespace onyx
