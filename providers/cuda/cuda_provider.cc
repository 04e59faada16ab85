#include "providers/cuda/cuda_provider.h"

#include <atomic>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/device_arena.h"
#include "onyx/status_macros.h"
#include "providers/cuda/cuda_memcpy.h"

namespace onyx {
namespace {

// Pinned memory is scarce (it cannot be paged out): staging needs only the
// copies in flight on the lanes at once.
constexpr size_t kPinnedArenaLimit = size_t{256} << 20;
constexpr size_t kLaneWorkspaceBytes = size_t{32} << 20;
constexpr size_t kStagingSegmentBytes = size_t{16} << 20;

absl::Status SameBytes(const Tensor& src, const Tensor& dst, const char* what) {
  if (src.type() == DataType::kString || dst.type() == DataType::kString) {
    return absl::InvalidArgumentError(
        absl::StrCat("execution provider 'cuda': ", what, ": string tensors cannot live in CUDA device memory"));
  }
  if (src.type() != dst.type() || src.byte_size() != dst.byte_size()) {
    return absl::InvalidArgumentError(absl::StrCat("execution provider 'cuda': ", what, ": source is ",
                                                   DataTypeName(src.type()), DimsToString(src.dims()), ", destination ",
                                                   DataTypeName(dst.type()), DimsToString(dst.dims())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaExecutionProvider>> CudaExecutionProvider::Create(const ProviderOptions& options,
                                                                                     Dependencies deps) {
  ASSIGN_OR_RETURN(CudaProviderOptions parsed, ParseCudaProviderOptions(options));
  absl::StatusOr<int> count = deps.runtime->DeviceCount();
  if (!count.ok()) {
    return absl::UnavailableError(
        absl::StrCat("execution provider 'cuda': no CUDA device (", count.status().message(), ")"));
  }
  if (*count == 0) {
    return absl::UnavailableError("execution provider 'cuda': no CUDA device (cudaGetDeviceCount found 0 devices)");
  }
  if (parsed.device_id >= *count) {
    return absl::InvalidArgumentError(
        absl::StrCat("execution provider 'cuda': option device_id expects a device below ", *count,
                     " (the CUDA devices visible), received '", parsed.device_id, "'"));
  }
  std::unique_ptr<CudaExecutionProvider> p(new CudaExecutionProvider(parsed, std::move(deps)));
  absl::Status lane = p->lanes_->Prewarm();
  if (!lane.ok()) {
    return absl::Status(lane.code(), absl::StrCat("execution provider 'cuda': setting up a stream on ",
                                                  p->device_label_, " failed: ", lane.message()));
  }
  return p;
}

CudaExecutionProvider::CudaExecutionProvider(CudaProviderOptions options, Dependencies deps)
    : options_(options), deps_(std::move(deps)), device_label_(absl::StrCat("cuda:", options_.device_id)) {
  device_allocator_ = std::make_shared<DeviceAllocator>(deps_.runtime, options_.device_id);
  pinned_allocator_ = std::make_shared<PinnedHostAllocator>(deps_.runtime);
  BFCArena::Options device_options;
  device_options.max_bytes = options_.gpu_mem_limit;
  device_options.name = device_label_;
  device_arena_ = MakeOwningArena(device_allocator_, device_options);
  BFCArena::Options pinned_options;
  pinned_options.max_bytes = kPinnedArenaLimit;
  pinned_options.name = "cuda_pinned";
  pinned_arena_ = MakeOwningArena(pinned_allocator_, pinned_options);
  // An arena per provider instance (each session's lane frees in its own
  // stream order), listed as group "session-<n>" of the device.
  static std::atomic<int64_t> instances{0};
  RegisterDeviceArena(device_label_, absl::StrCat("session-", instances.fetch_add(1) + 1), device_arena_);

  LanePool::Options pool;
  pool.runtime = deps_.runtime;
  pool.staging = pinned_arena_;
  pool.lane.device_ordinal = options_.device_id;
  pool.lane.workspace_bytes = kLaneWorkspaceBytes;
  pool.lane.allow_tf32 = options_.tf32;
  pool.lane.staging_segment_bytes = kStagingSegmentBytes;
  pool.resources = deps_.lane_resources;
  lanes_ = std::make_shared<LanePool>(std::move(pool));

  RegisterMemcpyKernels(registry_);
  if (deps_.register_kernels) deps_.register_kernels(registry_);
}

CudaExecutionProvider::~CudaExecutionProvider() {
  // Device copies of constants may be held by kernels still; the arena stays
  // alive through them (OwnChunk). Only the cache goes here.
  absl::MutexLock lock(&uploads_mu_);
  uploads_.clear();
}

Capability CudaExecutionProvider::GetCapability(const Graph& graph) const {
  Capability cap = IExecutionProvider::GetCapability(graph);
  if (!deps_.node_supported) return cap;
  std::vector<size_t> taken;
  for (size_t index : cap.nodes) {
    absl::Status supported = deps_.node_supported(*graph.node(index), graph);
    if (supported.ok()) {
      taken.push_back(index);
    } else {
      cap.declined[index] = std::string(supported.message());
    }
  }
  cap.nodes = std::move(taken);
  return cap;
}

std::unique_ptr<Stream> CudaExecutionProvider::CreateStream() const { return std::make_unique<CudaStream>(lanes_); }

absl::Status CudaExecutionProvider::OnPooledLane(const std::function<absl::Status(DeviceLane&)>& copy) const {
  ASSIGN_OR_RETURN(std::unique_ptr<DeviceLane> lane, lanes_->Acquire());
  absl::Status status;
  {
    ScopedDevice device(*deps_.runtime, options_.device_id);
    status = device.status();
    if (status.ok()) status = copy(*lane);
    if (status.ok()) status = lane->Synchronize();
  }
  lanes_->Release(std::move(lane));
  return status;
}

absl::Status CudaExecutionProvider::CopyToHost(const Tensor& src, Tensor& dst) const {
  RETURN_IF_ERROR(SameBytes(src, dst, "CopyToHost"));
  return OnPooledLane(
      [&](DeviceLane& lane) { return CopyDeviceToHost(lane, dst.mutable_raw(), src.raw(), src.byte_size()); });
}

absl::Status CudaExecutionProvider::CopyFromHost(const Tensor& src, Tensor& dst) const {
  RETURN_IF_ERROR(SameBytes(src, dst, "CopyFromHost"));
  return OnPooledLane(
      [&](DeviceLane& lane) { return CopyHostToDevice(lane, dst.mutable_raw(), src.raw(), src.byte_size()); });
}

absl::StatusOr<Tensor> CudaExecutionProvider::UploadConstant(const Tensor& host) const {
  if (host.type() == DataType::kString) {
    return absl::InvalidArgumentError("execution provider 'cuda': string tensors cannot live in CUDA device memory");
  }
  absl::MutexLock lock(&uploads_mu_);  // held across the copy: uploads happen at session creation only
  auto it = uploads_.find(host.raw());
  if (it != uploads_.end() && it->second.host.byte_size() == host.byte_size() &&
      it->second.host.type() == host.type()) {
    return it->second.device.Reshaped(host.dims());
  }
  const size_t bytes = host.byte_size();
  ASSIGN_OR_RETURN(void* data, device_arena_->Allocate(bytes));
  Tensor device = Tensor::FromBuffer(host.type(), host.dims(), data, device_arena_->OwnChunk(data));
  RETURN_IF_ERROR(OnPooledLane([&](DeviceLane& lane) { return CopyHostToDevice(lane, data, host.raw(), bytes); }));
  if (host.raw() != nullptr) uploads_[host.raw()] = Upload{host, device};
  return device;
}

absl::StatusOr<Tensor> UploadConstantInput(const OpKernelInfo& info, int input) {
  const Tensor* host = info.ConstantInput(input);
  if (host == nullptr) return info.Error(absl::StrCat("input ", input, " is not a constant initializer"));
  const auto* provider = dynamic_cast<const CudaExecutionProvider*>(info.provider());
  if (provider == nullptr) return info.Error("the node is not assigned to the cuda provider");
  absl::StatusOr<Tensor> device = provider->UploadConstant(*host);
  if (!device.ok()) {
    return absl::Status(device.status().code(), absl::StrCat(info.node().Label(), ": uploading input ", input, ": ",
                                                             device.status().message()));
  }
  return device;
}

}  // namespace onyx
