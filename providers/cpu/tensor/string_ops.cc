// StringConcat and StringSplit (opset 20).
//
// StringSplit follows ONNX Runtime 1.30 where it departs from Python's
// str.split: an empty string has no substrings (whatever the delimiter), and
// without a delimiter only spaces separate (not tabs or newlines), with the
// string trimmed of spaces at both ends, also when maxsplit leaves a remainder.
// Y has X's shape plus one axis as long as the longest split; shorter splits
// are padded with empty strings.
#include <string_view>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

absl::Status CheckStrings(const OpKernelContext& ctx, int n) {
  RETURN_IF_ERROR(CheckTensorInputs(ctx, n));
  for (int i = 0; i < n; ++i) {
    if (ctx.Input(i)->type() != DataType::kString) {
      return ctx.Error(absl::StrCat("input ", i, " must be string, received ", DataTypeName(ctx.Input(i)->type())));
    }
  }
  return absl::OkStatus();
}

class StringConcat final : public OpKernel {
 public:
  explicit StringConcat(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckStrings(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    const Tensor& y = *ctx.Input(1);
    ASSIGN_OR_RETURN(Dims dims, BroadcastShape(x.dims(), y.dims()));
    ASSIGN_OR_RETURN(Tensor * z, ctx.Output(0, dims, DataType::kString));
    const std::string* px = x.data<std::string>();
    const std::string* py = y.data<std::string>();
    std::string* pz = z->mutable_data<std::string>();
    ForEachBroadcastRow(dims, BroadcastStrides(x.dims(), dims), BroadcastStrides(y.dims(), dims),
                        [&](int64_t out, int64_t a, int64_t b, int64_t inner, int64_t a_step, int64_t b_step) {
      for (int64_t i = 0; i < inner; ++i) pz[out + i] = px[a + i * a_step] + py[b + i * b_step];
    });
    return absl::OkStatus();
  }
};

class StringSplit final : public OpKernel {
 public:
  explicit StringSplit(const OpKernelInfo& info)
      : delimiter_(info.AttrOr<std::string>("delimiter", "")), maxsplit_(info.AttrOr<int64_t>("maxsplit", -1)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckStrings(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    const std::string* px = x.data<std::string>();
    std::vector<std::vector<std::string_view>> parts(x.num_elements());
    size_t longest = 0;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      parts[i] = delimiter_.empty() ? SplitSpaces(px[i]) : SplitOn(px[i]);
      longest = std::max(longest, parts[i].size());
    }
    Dims y_dims = x.dims();
    y_dims.push_back(static_cast<int64_t>(longest));
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, y_dims, DataType::kString));
    std::string* py = y->mutable_data<std::string>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      for (size_t j = 0; j < parts[i].size(); ++j) py[i * longest + j] = std::string(parts[i][j]);
    }
    if (ctx.OutputCount() > 1 && ctx.OutputRequested(1)) {
      ASSIGN_OR_RETURN(Tensor * z, ctx.Output(1, x.dims(), DataType::kInt64));
      for (int64_t i = 0; i < x.num_elements(); ++i) z->mutable_data<int64_t>()[i] = parts[i].size();
    }
    return absl::OkStatus();
  }

 private:
  bool MaySplit(size_t found) const { return maxsplit_ < 0 || found < static_cast<size_t>(maxsplit_) + 1; }

  std::vector<std::string_view> SplitOn(std::string_view s) const {
    std::vector<std::string_view> out;
    if (s.empty()) return out;
    size_t start = 0;
    while (MaySplit(out.size() + 1)) {
      const size_t at = s.find(delimiter_, start);
      if (at == std::string_view::npos) break;
      out.push_back(s.substr(start, at - start));
      start = at + delimiter_.size();
    }
    out.push_back(s.substr(start));
    return out;
  }

  std::vector<std::string_view> SplitSpaces(std::string_view s) const {
    std::vector<std::string_view> out;
    const size_t first = s.find_first_not_of(' ');
    if (first == std::string_view::npos) return out;
    s = s.substr(first, s.find_last_not_of(' ') - first + 1);
    size_t start = 0;
    while (true) {
      if (!MaySplit(out.size() + 1)) {
        out.push_back(s.substr(start));
        break;
      }
      const size_t at = s.find(' ', start);
      if (at == std::string_view::npos) {
        out.push_back(s.substr(start));
        break;
      }
      out.push_back(s.substr(start, at - start));
      start = s.find_first_not_of(' ', at);
    }
    return out;
  }

  std::string delimiter_;
  int64_t maxsplit_;
};

}  // namespace

void RegisterStringOpsKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("StringConcat").Since(20).Build(), MakeFactory<StringConcat>());
  r.Register(KernelDefBuilder("StringSplit").Since(20).Build(), MakeFactory<StringSplit>());
}

}  // namespace onyx
