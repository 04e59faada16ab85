// The CUDA execution provider: device memory of one CUDA device, a stream per
// session lane, and the kernels of kernels/ plus the boundary Memcpy kernels.
// Built as libonyx_provider_cuda.so (cuda_entry.cc) and loaded on demand, so
// a CPU-only host never needs CUDA libraries.
//
//   SessionOptions options;
//   options.providers = {"cuda:device_id=0;tf32=1;gpu_mem_limit=8589934592"};
//
// On a host without a usable device, creation fails with UNAVAILABLE:
// "execution provider 'cuda': no CUDA device (cudaGetDeviceCount: ...)".
//
// Memory: each provider instance (one per session) owns a device arena over
// DeviceAllocator, capped by gpu_mem_limit and listed in the arena metrics as
// "cuda:<id>", and a pinned arena for staging copies. One arena per session
// keeps reuse of freed device memory in stream order: a session's device
// work all runs on its one lane stream.
//
// Constants: ConstantInputsOnHost() is true, so initializers reach kernels in
// host memory; a kernel uploads those it needs once, when it is created:
//
//   ASSIGN_OR_RETURN(Tensor w, UploadConstantInput(info, 1));   // device copy, kept by the kernel
//
// Thread-safe after creation.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "framework/execution_provider.h"
#include "framework/op_kernel.h"
#include "providers/cuda/cuda_allocator.h"
#include "providers/cuda/cuda_options.h"
#include "providers/cuda/cuda_stream.h"

namespace onyx {

class CudaExecutionProvider final : public IExecutionProvider {
 public:
  // What differs between the real provider and the one tests make over
  // FakeDeviceRuntime.
  struct Dependencies {
    std::shared_ptr<DeviceRuntime> runtime;
    // Adds the device kernels (RegisterCudaKernels in the CUDA build).
    std::function<void(KernelRegistry&)> register_kernels;
    // The lanes' library handles (CreateCudaLaneResources in the CUDA build).
    LaneResourcesFactory lane_resources;
    // Whether the kernel registered for a node can be created (CudaNodeSupported
    // in the CUDA build); GetCapability declines a node it refuses, with its
    // reason. Empty: every node the registry matches.
    std::function<absl::Status(const Node&, const Graph&)> node_supported;
  };

  // Parses the options (ParseCudaProviderOptions's errors), then checks the
  // device: UNAVAILABLE "execution provider 'cuda': no CUDA device (...)"
  // when the runtime reports none or fails to count; INVALID_ARGUMENT when
  // device_id is not below the device count. Sets up one lane up front, so
  // that a device or library that cannot be used fails creation.
  static absl::StatusOr<std::unique_ptr<CudaExecutionProvider>> Create(const ProviderOptions& options,
                                                                       Dependencies deps);
  ~CudaExecutionProvider() override;

  const char* name() const override { return "cuda"; }
  const char* device() const override { return device_label_.c_str(); }  // "cuda:<device_id>"
  const KernelRegistry& kernel_registry() const override { return registry_; }
  // The default (nodes the registry matches), less those node_supported
  // refuses, which are declined with its reason.
  Capability GetCapability(const Graph& graph) const override;
  BFCArena* arena() const override { return device_arena_.get(); }
  bool ConstantInputsOnHost() const override { return true; }
  // A CudaStream over the provider's lane pool (cheap: the lane is taken on
  // the stream's first work item).
  std::unique_ptr<Stream> CreateStream() const override;
  // Synchronous copies between a device tensor and a host tensor of the same
  // type and byte size (INVALID_ARGUMENT otherwise; strings are refused).
  absl::Status CopyToHost(const Tensor& src, Tensor& dst) const override;
  absl::Status CopyFromHost(const Tensor& src, Tensor& dst) const override;

  // A device copy of the host tensor `host`, complete when this returns, in
  // the device arena. Uploads of the same host buffer share one device copy
  // for this provider's lifetime.
  absl::StatusOr<Tensor> UploadConstant(const Tensor& host) const;

  const CudaProviderOptions& options() const { return options_; }
  DeviceRuntime& runtime() const { return *deps_.runtime; }
  const DeviceAllocator& device_allocator() const { return *device_allocator_; }
  const PinnedHostAllocator& pinned_allocator() const { return *pinned_allocator_; }
  BFCArena& pinned_arena() const { return *pinned_arena_; }
  LanePool& lanes() const { return *lanes_; }

 private:
  CudaExecutionProvider(CudaProviderOptions options, Dependencies deps);
  // Runs `copy` on an idle lane, synchronised after, with the device current.
  absl::Status OnPooledLane(const std::function<absl::Status(DeviceLane&)>& copy) const;

  const CudaProviderOptions options_;
  const Dependencies deps_;
  const std::string device_label_;
  std::shared_ptr<DeviceAllocator> device_allocator_;
  std::shared_ptr<PinnedHostAllocator> pinned_allocator_;
  std::shared_ptr<BFCArena> device_arena_;
  std::shared_ptr<BFCArena> pinned_arena_;
  std::shared_ptr<LanePool> lanes_;
  KernelRegistry registry_;

  struct Upload {
    Tensor host;  // held so that its buffer, the key, cannot be reused
    Tensor device;
  };
  mutable absl::Mutex uploads_mu_;
  mutable std::map<const void*, Upload> uploads_ ABSL_GUARDED_BY(uploads_mu_);
};

// The provider's factory over the real CUDA runtime, with the device kernels
// (defined by the provider library, cuda_entry.cc).
absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateCudaExecutionProvider(const ProviderOptions& options);

// For kernel factories: a device copy of constant input `input` of the node
// (OpKernelInfo::ConstantInput), uploaded through the node's CUDA provider.
// INVALID_ARGUMENT naming the node when the input is not a constant or the
// node is not on a CUDA provider.
absl::StatusOr<Tensor> UploadConstantInput(const OpKernelInfo& info, int input);

}  // namespace onyx
