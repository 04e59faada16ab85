// DeviceRuntime over the CUDA runtime API. Compiled only into the provider
// library built with the toolkit.
#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "providers/cuda/device_runtime.h"

namespace onyx {
namespace {

absl::StatusCode CodeFor(cudaError_t error) {
  switch (error) {
    case cudaErrorMemoryAllocation: return absl::StatusCode::kResourceExhausted;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInitializationError: return absl::StatusCode::kUnavailable;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidResourceHandle: return absl::StatusCode::kInvalidArgument;
    default: return absl::StatusCode::kInternal;
  }
}

// "<call>: <CUDA's error string>". Clears the thread's last-error slot, so a
// recoverable error (out of memory) does not resurface in a later call.
absl::Status Check(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();
  return absl::Status(CodeFor(error), absl::StrCat(call, ": ", cudaGetErrorString(error)));
}

cudaStream_t S(StreamHandle s) { return reinterpret_cast<cudaStream_t>(s); }
cudaEvent_t E(EventHandle e) { return reinterpret_cast<cudaEvent_t>(e); }

class CudaDeviceRuntime final : public DeviceRuntime {
 public:
  absl::StatusOr<int> DeviceCount() override {
    int count = 0;
    absl::Status status = Check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (!status.ok()) {
      // cudaErrorNoDevice and driver problems alike mean "no usable device".
      return absl::UnavailableError(status.message());
    }
    return count;
  }
  absl::StatusOr<DeviceProperties> GetDeviceProperties(int device) override {
    cudaDeviceProp prop{};
    absl::Status status = Check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    if (!status.ok()) return status;
    DeviceProperties out;
    out.name = prop.name;
    out.compute_major = prop.major;
    out.compute_minor = prop.minor;
    out.total_memory_bytes = prop.totalGlobalMem;
    out.multiprocessors = prop.multiProcessorCount;
    return out;
  }
  absl::StatusOr<int> GetDevice() override {
    int device = 0;
    absl::Status status = Check(cudaGetDevice(&device), "cudaGetDevice");
    if (!status.ok()) return status;
    return device;
  }
  absl::Status SetDevice(int device) override { return Check(cudaSetDevice(device), "cudaSetDevice"); }

  absl::StatusOr<void*> DeviceMalloc(size_t bytes) override {
    void* p = nullptr;
    absl::Status status = Check(cudaMalloc(&p, bytes), "cudaMalloc");
    if (!status.ok()) return absl::Status(status.code(), absl::StrCat(status.message(), " (", bytes, " bytes)"));
    return p;
  }
  absl::Status DeviceFree(void* p) override { return Check(cudaFree(p), "cudaFree"); }
  absl::StatusOr<void*> PinnedHostMalloc(size_t bytes) override {
    void* p = nullptr;
    absl::Status status = Check(cudaHostAlloc(&p, bytes, cudaHostAllocPortable), "cudaHostAlloc");
    if (!status.ok()) return absl::Status(status.code(), absl::StrCat(status.message(), " (", bytes, " bytes)"));
    return p;
  }
  absl::Status PinnedHostFree(void* p) override { return Check(cudaFreeHost(p), "cudaFreeHost"); }

  absl::StatusOr<StreamHandle> StreamCreate() override {
    cudaStream_t s = nullptr;
    absl::Status status = Check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    if (!status.ok()) return status;
    return reinterpret_cast<StreamHandle>(s);
  }
  absl::Status StreamDestroy(StreamHandle stream) override {
    return Check(cudaStreamDestroy(S(stream)), "cudaStreamDestroy");
  }
  absl::Status StreamSynchronize(StreamHandle stream) override {
    return Check(cudaStreamSynchronize(S(stream)), "cudaStreamSynchronize");
  }

  absl::StatusOr<EventHandle> EventCreate() override {
    cudaEvent_t e = nullptr;
    absl::Status status = Check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    if (!status.ok()) return status;
    return reinterpret_cast<EventHandle>(e);
  }
  absl::Status EventRecord(EventHandle event, StreamHandle stream) override {
    return Check(cudaEventRecord(E(event), S(stream)), "cudaEventRecord");
  }
  absl::Status StreamWaitEvent(StreamHandle stream, EventHandle event) override {
    return Check(cudaStreamWaitEvent(S(stream), E(event), 0), "cudaStreamWaitEvent");
  }
  absl::StatusOr<bool> EventQuery(EventHandle event) override {
    cudaError_t error = cudaEventQuery(E(event));
    if (error == cudaErrorNotReady) return false;
    absl::Status status = Check(error, "cudaEventQuery");
    if (!status.ok()) return status;
    return true;
  }
  absl::Status EventSynchronize(EventHandle event) override {
    return Check(cudaEventSynchronize(E(event)), "cudaEventSynchronize");
  }
  absl::Status EventDestroy(EventHandle event) override {
    return Check(cudaEventDestroy(E(event)), "cudaEventDestroy");
  }

  absl::Status MemcpyHostToDeviceAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) override {
    return Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, S(stream)), "cudaMemcpyAsync(HostToDevice)");
  }
  absl::Status MemcpyDeviceToHostAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) override {
    return Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, S(stream)), "cudaMemcpyAsync(DeviceToHost)");
  }
  absl::Status MemcpyDeviceToDeviceAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) override {
    return Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, S(stream)),
                 "cudaMemcpyAsync(DeviceToDevice)");
  }
  absl::Status MemsetAsync(void* dst, int value, size_t bytes, StreamHandle stream) override {
    return Check(cudaMemsetAsync(dst, value, bytes, S(stream)), "cudaMemsetAsync");
  }

  absl::Status BeginCapture(StreamHandle stream) override {
    // Thread-local: the global mode would make unsafe calls on every other
    // thread of the server (other sessions' allocations) fail meanwhile.
    return Check(cudaStreamBeginCapture(S(stream), cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  }
  absl::StatusOr<GraphHandle> EndCapture(StreamHandle stream) override {
    cudaGraph_t graph = nullptr;
    absl::Status status = Check(cudaStreamEndCapture(S(stream), &graph), "cudaStreamEndCapture");
    if (!status.ok()) {
      if (graph != nullptr) cudaGraphDestroy(graph);
      return status;
    }
    return reinterpret_cast<GraphHandle>(graph);
  }
  absl::StatusOr<GraphExecHandle> GraphInstantiate(GraphHandle graph) override {
    cudaGraphExec_t exec = nullptr;
    absl::Status status =
        Check(cudaGraphInstantiate(&exec, reinterpret_cast<cudaGraph_t>(graph), 0), "cudaGraphInstantiate");
    if (!status.ok()) return status;
    return reinterpret_cast<GraphExecHandle>(exec);
  }
  absl::Status GraphLaunch(GraphExecHandle exec, StreamHandle stream) override {
    return Check(cudaGraphLaunch(reinterpret_cast<cudaGraphExec_t>(exec), S(stream)), "cudaGraphLaunch");
  }
  absl::Status GraphDestroy(GraphHandle graph) override {
    return Check(cudaGraphDestroy(reinterpret_cast<cudaGraph_t>(graph)), "cudaGraphDestroy");
  }
  absl::Status GraphExecDestroy(GraphExecHandle exec) override {
    return Check(cudaGraphExecDestroy(reinterpret_cast<cudaGraphExec_t>(exec)), "cudaGraphExecDestroy");
  }
};

}  // namespace

std::shared_ptr<DeviceRuntime> CreateCudaDeviceRuntime() { return std::make_shared<CudaDeviceRuntime>(); }

}  // namespace onyx
