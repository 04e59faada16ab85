#include "providers/cuda/cuda_lane.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

class CudaLaneResources final : public LaneResources {
 public:
  explicit CudaLaneResources(const LaneResourceRequest& r)
      : lane_{reinterpret_cast<cudaStream_t>(r.stream),
              nullptr,
              nullptr,
              nullptr,
              r.workspace,
              r.workspace_bytes,
              r.allow_tf32} {}
  ~CudaLaneResources() override {
    if (lane_.cudnn != nullptr) cudnnDestroy(lane_.cudnn);
    if (lane_.cublaslt != nullptr) cublasLtDestroy(lane_.cublaslt);
    if (lane_.cublas != nullptr) cublasDestroy(lane_.cublas);
  }
  const void* native() const override { return &lane_; }
  CudaLane& lane() { return lane_; }

 private:
  CudaLane lane_;
};

absl::Status Cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, ": ", cublasGetStatusString(status)));
}

absl::Status Cudnn(cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, ": ", cudnnGetErrorString(status)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<LaneResources>> CreateCudaLaneResources(const LaneResourceRequest& request) {
  auto resources = std::make_unique<CudaLaneResources>(request);
  CudaLane& lane = resources->lane();
  if (absl::Status s = Cublas(cublasCreate(&lane.cublas), "cublasCreate"); !s.ok()) return s;
  if (absl::Status s = Cublas(cublasSetStream(lane.cublas, lane.stream), "cublasSetStream"); !s.ok()) return s;
  // Our workspace: otherwise cuBLAS allocates its own, which a CUDA graph
  // capture would refuse.
  if (lane.workspace != nullptr) {
    absl::Status s =
        Cublas(cublasSetWorkspace(lane.cublas, lane.workspace, lane.workspace_bytes), "cublasSetWorkspace");
    if (!s.ok()) return s;
  }
  const cublasMath_t math = lane.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  if (absl::Status s = Cublas(cublasSetMathMode(lane.cublas, math), "cublasSetMathMode"); !s.ok()) return s;
  if (absl::Status s = Cublas(cublasLtCreate(&lane.cublaslt), "cublasLtCreate"); !s.ok()) return s;
  if (absl::Status s = Cudnn(cudnnCreate(&lane.cudnn), "cudnnCreate"); !s.ok()) return s;
  if (absl::Status s = Cudnn(cudnnSetStream(lane.cudnn, lane.stream), "cudnnSetStream"); !s.ok()) return s;
  return std::unique_ptr<LaneResources>(std::move(resources));
}

const CudaLane* CudaLaneOf(const DeviceLane& lane) {
  const LaneResources* resources = lane.resources();
  return resources == nullptr ? nullptr : static_cast<const CudaLane*>(resources->native());
}

absl::StatusOr<const CudaLane*> RequireCudaLane() {
  absl::StatusOr<DeviceLane*> lane = RequireCurrentLane();
  if (!lane.ok()) return lane.status();
  const CudaLane* cuda = CudaLaneOf(**lane);
  if (cuda == nullptr) return absl::FailedPreconditionError("the current lane has no CUDA handles");
  return cuda;
}

const CudaLane& CurrentCudaLane() {
  absl::StatusOr<const CudaLane*> lane = RequireCudaLane();
  if (!lane.ok()) {
    std::fprintf(stderr, "CurrentCudaLane: %s\n", lane.status().ToString().c_str());
    std::abort();
  }
  return **lane;
}

}  // namespace onyx
