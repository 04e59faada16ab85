// CudaLane: the CUDA-typed view of the current session lane, for kernels.
// Every cuda kernel runs on its session's lane thread (CudaStream), where the
// lane is installed: it submits its work to `stream`, uses the lane's library
// handles (already bound to `stream`) and may use `workspace` as scratch for
// the duration of its own calls (work on one stream runs in order, so the
// next kernel's use cannot overlap).
//
//   absl::Status Compute(OpKernelContext& ctx) const override {
//     ASSIGN_OR_RETURN(const CudaLane* lane, RequireCudaLane());
//     ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, dims, type));   // device memory
//     MyKernel<<<grid, block, 0, lane->stream>>>(...);
//     return CheckLaunch(ctx, cudaGetLastError());      // kernels/kernel_util.h
//   }
//
// Only the provider library built with the CUDA toolkit includes this header.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "providers/cuda/device_lane.h"

namespace onyx {

struct CudaLane {
  cudaStream_t stream;        // non-blocking; the lane's only stream
  cublasHandle_t cublas;      // bound to `stream`, math mode from allow_tf32, workspace set
  cublasLtHandle_t cublaslt;  // pass `stream` and `workspace` per call
  cudnnHandle_t cudnn;        // bound to `stream`
  void* workspace;            // device scratch shared by the three libraries
  size_t workspace_bytes;
  bool allow_tf32;  // the provider's tf32 option
};

// The lane of the calling thread. Calling it off a lane thread, or on a lane
// whose setup failed, is a programmer error: it aborts with the reason.
// Kernels that prefer a status use RequireCudaLane.
const CudaLane& CurrentCudaLane();
// The lane of the calling thread, or the error of RequireCurrentLane().
absl::StatusOr<const CudaLane*> RequireCudaLane();

// The CudaLane of `lane` (made by CreateCudaLaneResources), or nullptr.
const CudaLane* CudaLaneOf(const DeviceLane& lane);

// The LaneResourcesFactory of the CUDA build: creates the cuBLAS, cuBLASLt
// and cuDNN handles of a lane and binds them to its stream. Errors name the
// library call and its status string; the handles made before it are freed.
absl::StatusOr<std::unique_ptr<LaneResources>> CreateCudaLaneResources(const LaneResourceRequest& request);

}  // namespace onyx
