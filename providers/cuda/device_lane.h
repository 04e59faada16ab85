// DeviceLane: what one session lane of the CUDA provider owns on the device —
// a non-blocking stream, a workspace, the pinned staging buffers of copies
// still in flight, and (CUDA build only) the cuBLAS/cuBLASLt/cuDNN handles
// bound to that stream — plus the thread-local "current lane" through which
// kernels find it. Runtime-agnostic: the CUDA-typed view of a lane is
// CudaLane (cuda_lane.h), carried here as opaque LaneResources.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<DeviceLane> lane, DeviceLane::Create(config));
//   ScopedLane install(lane.get());           // on the thread that runs the lane's kernels
//   ASSIGN_OR_RETURN(DeviceLane* current, RequireCurrentLane());
//   ASSIGN_OR_RETURN(void* staging, current->AcquireStaging(bytes));
//   std::memcpy(staging, host, bytes);
//   RETURN_IF_ERROR(current->runtime().MemcpyHostToDeviceAsync(dst, staging, bytes, current->stream()));
//   RETURN_IF_ERROR(current->ReleaseStagingAfterWork(staging));  // freed once the copy has completed
//
// Staging: a pinned buffer read by an asynchronous copy must stay untouched
// until the copy has run. ReleaseStagingAfterWork records an event after the
// work submitted so far and keeps the buffer pending; ReapStaging hands back,
// without blocking, those whose event has completed (AcquireStaging reaps
// first, and waits for the oldest pending buffer when the staging allocator is
// full); Synchronize waits for everything and hands back every buffer.
//
// Thread-compatible: used by one thread at a time (the lane's worker). The
// destructor synchronises the stream before releasing anything.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/allocator.h"
#include "providers/cuda/device_runtime.h"

namespace onyx {

struct LaneOptions {
  int device_ordinal = 0;
  // Scratch device memory for cuBLAS, cuBLASLt and cuDNN calls on the lane
  // (they run in stream order, so one buffer serves them all).
  size_t workspace_bytes = size_t{32} << 20;
  bool allow_tf32 = false;
  // The largest staging buffer one copy segment takes (cuda_memcpy.h).
  size_t staging_segment_bytes = size_t{16} << 20;
};

// The CUDA library handles of a lane, made by the CUDA build
// (CreateCudaLaneResources, cuda_lane.h). native() is the CudaLane.
class LaneResources {
 public:
  virtual ~LaneResources() = default;
  virtual const void* native() const = 0;
};

struct LaneResourceRequest {
  int device_ordinal = 0;
  StreamHandle stream = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  bool allow_tf32 = false;
};

// Called with the lane's device current; nullptr factory: no resources.
using LaneResourcesFactory = std::function<absl::StatusOr<std::unique_ptr<LaneResources>>(const LaneResourceRequest&)>;

class DeviceLane {
 public:
  struct Config {
    std::shared_ptr<DeviceRuntime> runtime;
    // Where staging buffers come from: the provider's pinned arena.
    std::shared_ptr<IAllocator> staging;
    LaneOptions options;
    LaneResourcesFactory resources;
  };

  // Creates the stream, the workspace and the resources, with the lane's
  // device current for the call. Errors are the runtime's or the factory's.
  static absl::StatusOr<std::unique_ptr<DeviceLane>> Create(Config config);
  ~DeviceLane();
  DeviceLane(const DeviceLane&) = delete;
  DeviceLane& operator=(const DeviceLane&) = delete;

  DeviceRuntime& runtime() const { return *config_.runtime; }
  StreamHandle stream() const { return stream_; }
  const LaneOptions& options() const { return config_.options; }
  void* workspace() const { return workspace_; }
  // nullptr when the lane was made without a resources factory.
  const LaneResources* resources() const { return resources_.get(); }

  // A staging buffer of `bytes`. Reaps completed releases first; when the
  // staging allocator is full, waits for pending buffers one by one, oldest
  // first. RESOURCE_EXHAUSTED when nothing is pending and there is no room.
  absl::StatusOr<void*> AcquireStaging(size_t bytes);
  // Releases `p` once the work submitted to the stream so far has completed.
  // If no event can be recorded, synchronises the stream instead; if that
  // fails too, the buffer is leaked rather than reused while possibly in use.
  absl::Status ReleaseStagingAfterWork(void* p);
  // Releases `p` now: the caller knows no submitted work uses it.
  void ReleaseStagingNow(void* p);
  // Releases every pending buffer whose event has completed; never blocks.
  absl::Status ReapStaging();
  size_t pending_staging() const { return pending_.size(); }

  // Waits for all work on the stream, then releases every pending buffer.
  absl::Status Synchronize();

  // Events from the lane's pool (made on first need, destroyed with the lane).
  absl::StatusOr<EventHandle> AcquireEvent();
  void ReturnEvent(EventHandle event);

 private:
  struct Pending {
    void* buffer;
    EventHandle event;
  };
  explicit DeviceLane(Config config) : config_(std::move(config)) {}
  absl::Status WaitOldestStaging();

  Config config_;
  StreamHandle stream_ = nullptr;
  void* workspace_ = nullptr;
  std::unique_ptr<LaneResources> resources_;
  std::deque<Pending> pending_;
  std::vector<EventHandle> free_events_;
  std::vector<EventHandle> all_events_;
};

// The lane installed on the calling thread (ScopedLane), or nullptr.
DeviceLane* CurrentDeviceLane();
// The current lane; otherwise the error that kept this thread from getting
// one (its creation failed), or FAILED_PRECONDITION when the thread runs no
// lane (a cuda node run off the provider's stream).
absl::StatusOr<DeviceLane*> RequireCurrentLane();

// Installs `lane` (or, when it is null, the `error` that replaced it) as the
// calling thread's current lane for the scope; restores the previous one
// after. Thread-hostile.
class ScopedLane {
 public:
  explicit ScopedLane(DeviceLane* lane, absl::Status error = absl::OkStatus());
  ~ScopedLane();
  ScopedLane(const ScopedLane&) = delete;
  ScopedLane& operator=(const ScopedLane&) = delete;

 private:
  DeviceLane* previous_lane_;
  const absl::Status* previous_error_;
  absl::Status error_;
};

}  // namespace onyx
