// IExecutionProvider: a device that runs kernels (CPU, CUDA, the test device).
// Providers are created by name through a ProviderRegistry; the partitioner asks
// each, in priority order, which nodes it takes.
// Implementations are thread-safe after construction.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "framework/bfc_arena.h"
#include "framework/kernel_registry.h"
#include "framework/stream.h"
#include "graph/graph.h"

namespace onyx {

struct Capability {
  std::vector<size_t> nodes;               // node indices this provider takes
  std::map<size_t, std::string> declined;  // node index -> why not
};

class IExecutionProvider {
 public:
  virtual ~IExecutionProvider() = default;

  virtual const char* name() const = 0;
  // Memory the provider's kernels read and write: "cpu" for host memory.
  // Values crossing between providers of different devices get Memcpy nodes.
  virtual const char* device() const = 0;
  virtual const KernelRegistry& kernel_registry() const = 0;

  // Nodes this provider can run. The default takes every node its registry has
  // a kernel for, excluding those already assigned to another provider.
  virtual Capability GetCapability(const Graph& graph) const;

  // The arena this provider's kernels allocate outputs from; nullptr means host
  // memory (the process-wide CPU arena).
  virtual BFCArena* arena() const { return nullptr; }

  // True when this provider's kernels take constant initializers in host
  // memory (reading them once at creation through OpKernelInfo::ConstantInput
  // and keeping their own device copy): the partitioner then copies no
  // initializer to this provider's device per run.
  virtual bool ConstantInputsOnHost() const { return false; }

  // A stream for one session's lane on this device, or nullptr when the
  // provider's kernels run synchronously on the calling CPU thread.
  virtual std::unique_ptr<Stream> CreateStream() const { return nullptr; }

  // Copies a tensor between this provider's device and host memory.
  // Optional: host-memory providers need not override.
  virtual absl::Status CopyToHost(const Tensor& src, Tensor& dst) const;
  virtual absl::Status CopyFromHost(const Tensor& src, Tensor& dst) const;
};

struct ProviderOptions {
  std::map<std::string, std::string> settings;
};

using ProviderFactory = std::function<absl::StatusOr<std::unique_ptr<IExecutionProvider>>(const ProviderOptions&)>;

// A table of provider factories by name. The session layer keeps the
// process's one (session/provider_registry.h), filled by the runtime library
// that links the providers. Thread-safe.
class ProviderRegistry {
 public:
  // Adds or replaces the factory for `name`.
  void Register(const std::string& name, ProviderFactory factory);
  // NOT_FOUND listing the registered names when `name` is unknown.
  absl::StatusOr<std::unique_ptr<IExecutionProvider>> Create(const std::string& name,
                                                             const ProviderOptions& options) const;
  std::vector<std::string> Names() const;
  bool Contains(const std::string& name) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, ProviderFactory> factories_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx
