// Copies between host memory and CUDA device memory on a lane's stream, and
// the com.onyx MemcpyFromHost / MemcpyToHost kernels the partitioner's
// boundary nodes run on the CUDA lane.
//
//   ASSIGN_OR_RETURN(DeviceLane* lane, RequireCurrentLane());
//   RETURN_IF_ERROR(CopyHostToDevice(*lane, dev, host, bytes));   // returns before the copy ran
//   RETURN_IF_ERROR(CopyDeviceToHost(*lane, host, dev, bytes));   // returns after it ran
//
// A copy is cut into segments of at most LaneOptions::staging_segment_bytes
// (PlanCopySegments), each going through a pinned staging buffer of the
// lane's staging arena, so that transfers are real DMA and host->device
// copies do not block the lane's thread:
//  - host->device: memcpy into staging, async copy, then the staging buffer is
//    released only once an event recorded after the copy has completed
//    (DeviceLane::ReleaseStagingAfterWork). The source may change or go as
//    soon as the call returns. Device work later on the stream sees the data.
//  - device->host: async copies into staging, an event after each, then the
//    host waits for each event and copies out. It returns after the data
//    landed: consumers on other lanes are ordered by host-side notification.
// When the staging arena has no room even after waiting for the lane's
// pending buffers, a segment is copied directly from/to the caller's pageable
// memory (the driver stages it, blocking until earlier work has run).
#pragma once

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "framework/kernel_registry.h"
#include "providers/cuda/device_lane.h"

namespace onyx {

struct CopySegment {
  size_t offset = 0;
  size_t bytes = 0;
  bool operator==(const CopySegment& o) const { return offset == o.offset && bytes == o.bytes; }
};

// [0, bytes) cut into consecutive segments of `max_segment_bytes` (the last
// one shorter); none for 0 bytes; one when `max_segment_bytes` is 0.
std::vector<CopySegment> PlanCopySegments(size_t bytes, size_t max_segment_bytes);

// See the file comment. Errors are the runtime's (their message names the
// CUDA call); on an error, staging buffers already handed to copies are
// released only after those copies complete.
absl::Status CopyHostToDevice(DeviceLane& lane, void* dst, const void* src, size_t bytes);
absl::Status CopyDeviceToHost(DeviceLane& lane, void* dst, const void* src, size_t bytes);

// Registers the com.onyx MemcpyFromHost (output in the provider's device
// arena) and MemcpyToHost (output in host memory from the shared CPU arena)
// kernels, with provider "cuda". They run on the session's CUDA lane thread
// and fail with RequireCurrentLane()'s error elsewhere; string tensors and
// sequences are refused (INVALID_ARGUMENT naming the node).
void RegisterMemcpyKernels(KernelRegistry& registry);

}  // namespace onyx
