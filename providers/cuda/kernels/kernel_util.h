// Host-side helpers shared by the CUDA provider's kernels: the CudaKernel
// base class (constant inputs uploaded once, device views at run time),
// status conversion for CUDA errors, type lists and reads of shape-like
// constant inputs.
//
//   class Relu final : public CudaKernel {
//    public:
//     static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
//       auto k = std::unique_ptr<Relu>(new Relu());
//       RETURN_IF_ERROR(k->UploadConstantInputs(info));
//       return std::unique_ptr<OpKernel>(std::move(k));
//     }
//     absl::Status Compute(OpKernelContext& ctx) const override {
//       const Tensor* x = DeviceInput(ctx, 0);
//       ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, x->dims(), x->type()));
//       return CheckLaunch(ctx, LaunchUnary(..., CurrentCudaLane().stream));
//     }
//   };
//
// Every kernel runs on its lane's worker thread and enqueues on
// CurrentCudaLane().stream without synchronizing; outputs are always
// allocated with OutputForOverwrite (device memory cannot be zero-filled by
// the host) and fully written.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/kernel_def.h"
#include "framework/op_kernel.h"
#include "onyx/tensor.h"
#include "providers/cuda/cuda_lane.h"

namespace onyx::cuda_ops {

// Types the float kernels compute.
inline const std::vector<DataType> kCudaFloatTypes = {DataType::kFloat, DataType::kFloat16};
// Types the binary arithmetic and comparison kernels compute.
inline const std::vector<DataType> kCudaArithmeticTypes = {DataType::kFloat, DataType::kFloat16, DataType::kInt32,
                                                           DataType::kInt64};
// Every fixed-size type: the data-movement kernels (copy, gather, transpose).
inline const std::vector<DataType> kCudaCopyTypes = {
    DataType::kFloat, DataType::kFloat16, DataType::kBFloat16, DataType::kDouble, DataType::kInt8,
    DataType::kUint8, DataType::kInt16,   DataType::kUint16,   DataType::kInt32,  DataType::kUint32,
    DataType::kInt64, DataType::kUint64,  DataType::kBool};
inline const std::vector<DataType> kCudaIndexTypes = {DataType::kInt32, DataType::kInt64};

// Base of every CUDA kernel. Thread-compatible while created, then
// thread-safe (Compute reads only).
class CudaKernel : public OpKernel {
 protected:
  // Uploads every input that is a constant initializer (a host tensor under
  // ConstantInputsOnHost) to device memory held by this kernel, through the
  // node's provider (UploadConstantInput, cuda_provider.h: the provider's
  // device arena, one copy per initializer), except `host_inputs`, which the
  // kernel reads on the host at creation. Errors name the node and input.
  absl::Status UploadConstantInputs(const OpKernelInfo& info, std::initializer_list<int> host_inputs = {});

  // Input i in device memory: the uploaded copy of a constant initializer,
  // else the run's value; nullptr when omitted.
  const Tensor* DeviceInput(const OpKernelContext& ctx, int i) const;

  // DeviceInput, or INVALID_ARGUMENT naming the node when input i is omitted
  // or not a tensor.
  absl::StatusOr<const Tensor*> RequiredInput(const OpKernelContext& ctx, int i) const;

  // The uploaded copy of input i, or nullptr when it is not a constant.
  const Tensor* ConstantOnDevice(int i) const;

 private:
  std::vector<std::optional<Tensor>> constants_;  // by input index
};

// OK for cudaSuccess; else INTERNAL naming the node, its op and the CUDA
// error (name and string).
absl::Status CheckLaunch(const OpKernelContext& ctx, cudaError_t err);
absl::Status CudaStatus(const Node& node, absl::string_view what, cudaError_t err);

// INVALID_ARGUMENT naming the node when a tensor of n elements is too large
// for the 32-bit indexing of the kernels (n >= 2^31).
absl::Status CheckIndexable(const OpKernelContext& ctx, int64_t n, absl::string_view what);

// FAILED_PRECONDITION naming the node and input when input i is present but
// not a constant initializer: the CUDA kernel reads it on the host at
// creation (shape-like inputs), so a computed one must run elsewhere.
absl::Status RequireConstantInput(const OpKernelInfo& info, int i, absl::string_view what);

// The values of a host int32/int64 tensor (shape-like constants).
absl::StatusOr<std::vector<int64_t>> ReadInt64s(const OpKernelInfo& info, const Tensor& t, absl::string_view what);
// The values of a host float/half/double tensor (Resize scales, Clip bounds).
absl::StatusOr<std::vector<float>> ReadFloats(const OpKernelInfo& info, const Tensor& t, absl::string_view what);

// axis in [-rank, rank) normalised to [0, rank); false when out of range.
bool NormalizeAxis(int64_t& axis, int64_t rank);

// Row-major strides of dims.
Dims StridesOf(absl::Span<const int64_t> dims);

}  // namespace onyx::cuda_ops
