#include "providers/cuda/cuda_memcpy.h"

#include <cstring>
#include <deque>

#include "absl/strings/str_cat.h"
#include "framework/device_arena.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"

namespace onyx {
namespace {

const char* At(const void* p, size_t offset) { return static_cast<const char*>(p) + offset; }
char* At(void* p, size_t offset) { return static_cast<char*>(p) + offset; }

// A device->host segment whose copy into staging is queued.
struct InFlight {
  CopySegment segment;
  void* staging;
  EventHandle event;
};

// Waits for the oldest in-flight segment and copies it out.
absl::Status Land(DeviceLane& lane, std::deque<InFlight>& in_flight, void* dst) {
  InFlight f = in_flight.front();
  RETURN_IF_ERROR(lane.runtime().EventSynchronize(f.event));
  in_flight.pop_front();
  std::memcpy(At(dst, f.segment.offset), f.staging, f.segment.bytes);
  lane.ReleaseStagingNow(f.staging);
  lane.ReturnEvent(f.event);
  return absl::OkStatus();
}

// On an error: what is still queued may yet write into staging buffers, so
// they go back only after the stream has passed them.
absl::Status Abandon(DeviceLane& lane, std::deque<InFlight>& in_flight, absl::Status error) {
  for (const InFlight& f : in_flight) {
    lane.ReturnEvent(f.event);
    lane.ReleaseStagingAfterWork(f.staging).IgnoreError();
  }
  in_flight.clear();
  return error;
}

absl::Status DeviceToHostDirect(DeviceLane& lane, void* dst, const void* src, size_t bytes) {
  RETURN_IF_ERROR(lane.runtime().MemcpyDeviceToHostAsync(dst, src, bytes, lane.stream()));
  ASSIGN_OR_RETURN(EventHandle event, lane.AcquireEvent());
  absl::Status status = lane.runtime().EventRecord(event, lane.stream());
  if (status.ok()) status = lane.runtime().EventSynchronize(event);
  lane.ReturnEvent(event);
  return status;
}

absl::Status WithLabel(const OpKernelContext& ctx, absl::Status status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(ctx.node().Label(), ": ", status.message()));
}

absl::StatusOr<const Tensor*> CopyableInput(const OpKernelContext& ctx) {
  const Tensor* src = ctx.Input(0);
  if (src == nullptr) return ctx.Error("Memcpy copies tensors only (received a sequence or no value)");
  if (src->type() == DataType::kString) return ctx.Error("string tensors cannot live in CUDA device memory");
  return src;
}

class MemcpyFromHost final : public OpKernel {
 public:
  explicit MemcpyFromHost(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    absl::StatusOr<DeviceLane*> lane = RequireCurrentLane();
    if (!lane.ok()) return WithLabel(ctx, lane.status());
    ASSIGN_OR_RETURN(const Tensor* src, CopyableInput(ctx));
    // Every byte is overwritten: device memory is never zero-filled by the frame.
    ASSIGN_OR_RETURN(Tensor * dst, ctx.OutputForOverwrite(0, src->dims(), src->type()));
    return WithLabel(ctx, CopyHostToDevice(**lane, dst->mutable_raw(), src->raw(), src->byte_size()));
  }
};

class MemcpyToHost final : public OpKernel {
 public:
  explicit MemcpyToHost(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    absl::StatusOr<DeviceLane*> lane = RequireCurrentLane();
    if (!lane.ok()) return WithLabel(ctx, lane.status());
    ASSIGN_OR_RETURN(const Tensor* src, CopyableInput(ctx));
    // The node runs on the device's lane, whose arena is device memory: the
    // host output comes from the shared CPU arena, without a zero fill.
    const size_t bytes = src->byte_size();
    BFCArena& arena = CpuArena();
    ASSIGN_OR_RETURN(void* data, arena.Allocate(bytes));
    Tensor host = Tensor::FromBuffer(src->type(), src->dims(), data, arena.OwnChunk(data));
    RETURN_IF_ERROR(WithLabel(ctx, CopyDeviceToHost(**lane, host.mutable_raw(), src->raw(), bytes)));
    ctx.SetOutput(0, Value(std::move(host)));
    return absl::OkStatus();
  }
};

}  // namespace

std::vector<CopySegment> PlanCopySegments(size_t bytes, size_t max_segment_bytes) {
  std::vector<CopySegment> segments;
  if (bytes == 0) return segments;
  if (max_segment_bytes == 0) max_segment_bytes = bytes;
  for (size_t offset = 0; offset < bytes; offset += max_segment_bytes) {
    segments.push_back(CopySegment{offset, std::min(max_segment_bytes, bytes - offset)});
  }
  return segments;
}

absl::Status CopyHostToDevice(DeviceLane& lane, void* dst, const void* src, size_t bytes) {
  DeviceRuntime& rt = lane.runtime();
  for (const CopySegment& s : PlanCopySegments(bytes, lane.options().staging_segment_bytes)) {
    absl::StatusOr<void*> staging = lane.AcquireStaging(s.bytes);
    if (!staging.ok()) {
      if (!absl::IsResourceExhausted(staging.status())) return staging.status();
      // No pinned memory to be had: the driver stages a pageable source itself.
      RETURN_IF_ERROR(rt.MemcpyHostToDeviceAsync(At(dst, s.offset), At(src, s.offset), s.bytes, lane.stream()));
      continue;
    }
    std::memcpy(*staging, At(src, s.offset), s.bytes);
    absl::Status queued = rt.MemcpyHostToDeviceAsync(At(dst, s.offset), *staging, s.bytes, lane.stream());
    if (!queued.ok()) {
      lane.ReleaseStagingNow(*staging);  // nothing reads it: the copy was not queued
      return queued;
    }
    RETURN_IF_ERROR(lane.ReleaseStagingAfterWork(*staging));
  }
  return absl::OkStatus();
}

absl::Status CopyDeviceToHost(DeviceLane& lane, void* dst, const void* src, size_t bytes) {
  DeviceRuntime& rt = lane.runtime();
  std::deque<InFlight> in_flight;
  for (const CopySegment& s : PlanCopySegments(bytes, lane.options().staging_segment_bytes)) {
    absl::StatusOr<void*> staging = lane.AcquireStaging(s.bytes);
    // Full: land our own segments first, they free staging memory too.
    while (!staging.ok() && absl::IsResourceExhausted(staging.status()) && !in_flight.empty()) {
      if (absl::Status landed = Land(lane, in_flight, dst); !landed.ok()) return Abandon(lane, in_flight, landed);
      staging = lane.AcquireStaging(s.bytes);
    }
    if (!staging.ok()) {
      if (!absl::IsResourceExhausted(staging.status())) return Abandon(lane, in_flight, staging.status());
      absl::Status direct = DeviceToHostDirect(lane, At(dst, s.offset), At(src, s.offset), s.bytes);
      if (!direct.ok()) return Abandon(lane, in_flight, direct);
      continue;
    }
    absl::Status queued = rt.MemcpyDeviceToHostAsync(*staging, At(src, s.offset), s.bytes, lane.stream());
    if (!queued.ok()) {
      lane.ReleaseStagingNow(*staging);
      return Abandon(lane, in_flight, queued);
    }
    absl::StatusOr<EventHandle> event = lane.AcquireEvent();
    absl::Status recorded = event.ok() ? rt.EventRecord(*event, lane.stream()) : event.status();
    if (!recorded.ok()) {
      if (event.ok()) lane.ReturnEvent(*event);
      lane.ReleaseStagingAfterWork(*staging).IgnoreError();
      return Abandon(lane, in_flight, recorded);
    }
    in_flight.push_back(InFlight{s, *staging, *event});
  }
  while (!in_flight.empty()) {
    if (absl::Status landed = Land(lane, in_flight, dst); !landed.ok()) return Abandon(lane, in_flight, landed);
  }
  return absl::OkStatus();
}

void RegisterMemcpyKernels(KernelRegistry& registry) {
  KernelDef from_host = KernelDefBuilder("MemcpyFromHost").Domain(kOnyxDomain).Build();
  from_host.provider = "cuda";
  registry.Register(from_host, MakeFactory<MemcpyFromHost>());
  KernelDef to_host = KernelDefBuilder("MemcpyToHost").Domain(kOnyxDomain).Build();
  to_host.provider = "cuda";
  registry.Register(to_host, MakeFactory<MemcpyToHost>());
}

}  // namespace onyx
