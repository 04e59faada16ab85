#include "providers/cuda/kernels/kernel_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/cuda_provider.h"

namespace onyx::cuda_ops {

absl::Status CudaKernel::UploadConstantInputs(const OpKernelInfo& info, std::initializer_list<int> host_inputs) {
  constants_.assign(info.InputCount(), std::nullopt);
  for (int i = 0; i < info.InputCount(); ++i) {
    if (std::find(host_inputs.begin(), host_inputs.end(), i) != host_inputs.end()) continue;
    const Tensor* host = info.ConstantInput(i);
    if (host == nullptr) continue;
    // The provider's upload: its device arena, the device made current, one
    // copy per host buffer for the provider's lifetime.
    ASSIGN_OR_RETURN(Tensor device, UploadConstantInput(info, i));
    constants_[i] = std::move(device);
  }
  return absl::OkStatus();
}

const Tensor* CudaKernel::DeviceInput(const OpKernelContext& ctx, int i) const {
  if (i >= 0 && i < static_cast<int>(constants_.size()) && constants_[i].has_value()) return &*constants_[i];
  return ctx.Input(i);
}

absl::StatusOr<const Tensor*> CudaKernel::RequiredInput(const OpKernelContext& ctx, int i) const {
  const Tensor* t = DeviceInput(ctx, i);
  if (t == nullptr) return ctx.Error(absl::StrCat("input ", i, " is missing or is not a tensor"));
  return t;
}

const Tensor* CudaKernel::ConstantOnDevice(int i) const {
  if (i >= 0 && i < static_cast<int>(constants_.size()) && constants_[i].has_value()) return &*constants_[i];
  return nullptr;
}

absl::Status CudaStatus(const Node& node, absl::string_view what, cudaError_t err) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(node.Label(), ": ", what, " failed: ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
}

absl::Status CheckLaunch(const OpKernelContext& ctx, cudaError_t err) {
  if (err == cudaSuccess) return absl::OkStatus();
  return CudaStatus(ctx.node(), absl::StrCat("CUDA kernel launch for ", ctx.node().op_type), err);
}

absl::Status CheckIndexable(const OpKernelContext& ctx, int64_t n, absl::string_view what) {
  if (n >= 0 && n < (int64_t{1} << 31)) return absl::OkStatus();
  return ctx.Error(absl::StrCat(what, " has ", n, " elements; the CUDA kernels index below 2^31"));
}

absl::Status RequireConstantInput(const OpKernelInfo& info, int i, absl::string_view what) {
  if (!info.HasInput(i) || info.ConstantInput(i) != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(info.node().Label(), ": input ", i, " ('", what, "' = '",
                                                    info.node().inputs[i],
                                                    "') must be a constant initializer for the CUDA kernel, which "
                                                    "reads it on the host once; it is computed at run time"));
}

absl::StatusOr<std::vector<int64_t>> ReadInt64s(const OpKernelInfo& info, const Tensor& t, absl::string_view what) {
  std::vector<int64_t> out;
  if (t.type() == DataType::kInt64) {
    out.assign(t.data<int64_t>(), t.data<int64_t>() + t.num_elements());
  } else if (t.type() == DataType::kInt32) {
    out.assign(t.data<int32_t>(), t.data<int32_t>() + t.num_elements());
  } else {
    return info.Error(absl::StrCat("input '", what, "' must be int64 or int32, received ", DataTypeName(t.type())));
  }
  return out;
}

absl::StatusOr<std::vector<float>> ReadFloats(const OpKernelInfo& info, const Tensor& t, absl::string_view what) {
  std::vector<float> out;
  const int64_t n = t.num_elements();
  switch (t.type()) {
    case DataType::kFloat: out.assign(t.data<float>(), t.data<float>() + n); break;
    case DataType::kDouble:
      for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<float>(t.data<double>()[i]));
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < n; ++i) out.push_back(HalfToFloat(t.data<uint16_t>()[i]));
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) out.push_back(BFloat16ToFloat(t.data<uint16_t>()[i]));
      break;
    default:
      return info.Error(absl::StrCat("input '", what, "' must be a float tensor, received ", DataTypeName(t.type())));
  }
  return out;
}

bool NormalizeAxis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

Dims StridesOf(absl::Span<const int64_t> dims) {
  Dims strides(dims.size(), 1);
  for (int64_t k = static_cast<int64_t>(dims.size()) - 2; k >= 0; --k) strides[k] = strides[k + 1] * dims[k + 1];
  return strides;
}

}  // namespace onyx::cuda_ops
