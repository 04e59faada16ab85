// DeviceRuntime: the CUDA runtime calls the provider's host side makes, behind
// an interface with no CUDA types, so that allocators, lanes, copies and graph
// capture can be tested with FakeDeviceRuntime on machines without a GPU.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<DeviceRuntime> rt, CreateCudaDeviceRuntime());
//   ASSIGN_OR_RETURN(int devices, rt->DeviceCount());      // UNAVAILABLE without a driver
//   RETURN_IF_ERROR(rt->SetDevice(0));
//   ASSIGN_OR_RETURN(StreamHandle s, rt->StreamCreate());
//   RETURN_IF_ERROR(rt->MemcpyHostToDeviceAsync(dst, pinned_src, bytes, s));
//   RETURN_IF_ERROR(rt->StreamSynchronize(s));
//
// Handles are opaque pointers (cudaStream_t, cudaEvent_t, cudaGraph_t,
// cudaGraphExec_t in the real runtime); the caller owns what a Create returns
// and gives it back to the matching Destroy. Every call returns a status whose
// message names the CUDA call and the CUDA error string ("cudaMalloc: out of
// memory"); codes: RESOURCE_EXHAUSTED for out-of-memory, UNAVAILABLE for a
// missing device or driver, INVALID_ARGUMENT for bad arguments, INTERNAL for
// the rest. Device calls act on the calling thread's current device
// (SetDevice), as CUDA's do. Implementations are thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace onyx {

// Opaque handle types: never defined, only pointed to.
struct DeviceStreamOpaque;
struct DeviceEventOpaque;
struct DeviceGraphOpaque;
struct DeviceGraphExecOpaque;
using StreamHandle = DeviceStreamOpaque*;
using EventHandle = DeviceEventOpaque*;
using GraphHandle = DeviceGraphOpaque*;
using GraphExecHandle = DeviceGraphExecOpaque*;

struct DeviceProperties {
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  size_t total_memory_bytes = 0;
  int multiprocessors = 0;
};

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // Devices visible to the process; an error (UNAVAILABLE) when the driver is
  // missing or too old, which callers report as "no CUDA device".
  virtual absl::StatusOr<int> DeviceCount() = 0;
  virtual absl::StatusOr<DeviceProperties> GetDeviceProperties(int device) = 0;
  // The calling thread's current device, and setting it.
  virtual absl::StatusOr<int> GetDevice() = 0;
  virtual absl::Status SetDevice(int device) = 0;

  // Device memory (cudaMalloc/cudaFree), at least 256-byte aligned. Free may
  // wait for the device to go idle, as cudaFree does: not for hot paths.
  virtual absl::StatusOr<void*> DeviceMalloc(size_t bytes) = 0;
  virtual absl::Status DeviceFree(void* p) = 0;
  // Page-locked host memory (cudaHostAlloc/cudaFreeHost), the only host
  // memory asynchronous copies may read or write without the driver staging.
  virtual absl::StatusOr<void*> PinnedHostMalloc(size_t bytes) = 0;
  virtual absl::Status PinnedHostFree(void* p) = 0;

  // A non-blocking stream: it never synchronises with the legacy default
  // stream. Work on one stream runs in submission order.
  virtual absl::StatusOr<StreamHandle> StreamCreate() = 0;
  virtual absl::Status StreamDestroy(StreamHandle stream) = 0;
  // Blocks until everything submitted to `stream` has completed.
  virtual absl::Status StreamSynchronize(StreamHandle stream) = 0;

  // Events without timing. An event completes when the work submitted to its
  // stream before EventRecord has completed; a never-recorded event counts as
  // complete. Recording again moves the event to the new point.
  virtual absl::StatusOr<EventHandle> EventCreate() = 0;
  virtual absl::Status EventRecord(EventHandle event, StreamHandle stream) = 0;
  // Work submitted to `stream` after this call waits for `event` (on the
  // device; the host does not block).
  virtual absl::Status StreamWaitEvent(StreamHandle stream, EventHandle event) = 0;
  // True when the event has completed; never blocks.
  virtual absl::StatusOr<bool> EventQuery(EventHandle event) = 0;
  // Blocks until the event has completed.
  virtual absl::Status EventSynchronize(EventHandle event) = 0;
  virtual absl::Status EventDestroy(EventHandle event) = 0;

  // Asynchronous copies and fills on `stream`. Host pointers should be pinned
  // (PinnedHostMalloc): from pageable memory the driver stages the copy and
  // may block the caller until earlier work on the stream has completed.
  // Until the copy has completed (an event recorded after it), its buffers
  // must stay alive and unchanged.
  virtual absl::Status MemcpyHostToDeviceAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) = 0;
  virtual absl::Status MemcpyDeviceToHostAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) = 0;
  virtual absl::Status MemcpyDeviceToDeviceAsync(void* dst, const void* src, size_t bytes, StreamHandle stream) = 0;
  virtual absl::Status MemsetAsync(void* dst, int value, size_t bytes, StreamHandle stream) = 0;

  // CUDA graphs. BeginCapture puts `stream` in capture mode, thread-local
  // (cudaStreamCaptureModeThreadLocal): work the calling thread submits to it
  // is recorded instead of run, and only the calling thread is barred from
  // unsafe calls (allocation, synchronisation) meanwhile; other threads of the
  // server carry on. EndCapture returns the recorded graph, or the error that
  // invalidated the capture (the stream leaves capture mode either way).
  virtual absl::Status BeginCapture(StreamHandle stream) = 0;
  virtual absl::StatusOr<GraphHandle> EndCapture(StreamHandle stream) = 0;
  virtual absl::StatusOr<GraphExecHandle> GraphInstantiate(GraphHandle graph) = 0;
  // Submits the whole recorded graph to `stream`, reading and writing the
  // device addresses recorded at capture.
  virtual absl::Status GraphLaunch(GraphExecHandle exec, StreamHandle stream) = 0;
  virtual absl::Status GraphDestroy(GraphHandle graph) = 0;
  virtual absl::Status GraphExecDestroy(GraphExecHandle exec) = 0;
};

// The runtime over CUDA's runtime API (cudart). Defined only in the provider
// library built with the CUDA toolkit (cuda_device_runtime.cc). Creating it
// touches no device; DeviceCount is the first call that may fail.
std::shared_ptr<DeviceRuntime> CreateCudaDeviceRuntime();

// Makes `device` current on the calling thread for the scope and restores the
// previous device after. A failure of either call is kept in status().
// Thread-hostile (it is per thread by nature).
class ScopedDevice {
 public:
  ScopedDevice(DeviceRuntime& runtime, int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  const absl::Status& status() const { return status_; }

 private:
  DeviceRuntime& runtime_;
  int previous_ = -1;
  absl::Status status_;
};

}  // namespace onyx
