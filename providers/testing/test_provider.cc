#include "providers/testing/test_provider.h"

#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "framework/device_arena.h"
#include "framework/provider_library.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/cpu_provider.h"

namespace onyx {
namespace {

std::atomic<int64_t> g_to_host{0};

// The test device's memory: host memory under another device name.
class TestDeviceAllocator final : public IAllocator {
 public:
  absl::StatusOr<void*> Allocate(size_t bytes) override { return CpuAllocator::Default()->Allocate(bytes); }
  void Free(void* p) override { CpuAllocator::Default()->Free(p); }
  const char* device() const override { return "test"; }
};
std::atomic<int64_t> g_from_host{0};

// Copies between host memory and the device arena. MemcpyFromHost runs on the
// device and allocates there; MemcpyToHost runs on the device too, so its
// output is allocated in host memory explicitly.
template <bool kToHost>
class Memcpy final : public OpKernel {
 public:
  explicit Memcpy(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* src = ctx.Input(0);
    if (src == nullptr) return ctx.Error("Memcpy copies tensors only");
    if (kToHost) {
      ctx.SetOutput(0, Value(src->Clone()));
    } else {
      ASSIGN_OR_RETURN(Tensor * dst, ctx.Output(0, src->dims(), src->type()));
      if (src->type() == DataType::kString) {
        for (int64_t i = 0; i < src->num_elements(); ++i)
          dst->mutable_data<std::string>()[i] = src->data<std::string>()[i];
      } else if (src->byte_size() > 0) {
        std::memcpy(dst->mutable_raw(), src->raw(), src->byte_size());
      }
    }
    (kToHost ? g_to_host : g_from_host).fetch_add(1);
    return absl::OkStatus();
  }
};

// Sleeps, then runs the wrapped kernel: a deliberately slow device.
class Delayed final : public OpKernel {
 public:
  Delayed(std::unique_ptr<OpKernel> inner, int64_t delay_us) : inner_(std::move(inner)), delay_us_(delay_us) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    return inner_->Compute(ctx);
  }

 private:
  std::unique_ptr<OpKernel> inner_;
  int64_t delay_us_;
};

// Throws instead of computing: a kernel failing the C++ way.
class Throwing final : public OpKernel {
 public:
  explicit Throwing(std::string what) : what_(std::move(what)) {}
  absl::Status Compute(OpKernelContext&) const override {
    if (what_ == "bad_alloc") throw std::bad_alloc();
    throw std::runtime_error("test kernel failure");
  }

 private:
  std::string what_;
};

}  // namespace

TestExecutionProvider::TestExecutionProvider(std::set<std::string> ops, int64_t delay_us, std::string throws) {
  const KernelRegistry& cpu = CpuKernelRegistry();
  for (const auto& [domain, op] : cpu.Ops()) {
    if (!domain.empty() || !ops.count(op)) continue;
    for (const auto* entry : cpu.Entries(domain, op)) {
      KernelDef def = entry->def;
      def.provider = "test";
      KernelFactory factory = entry->factory;
      if (!throws.empty()) {
        factory = [throws](const OpKernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
          return std::unique_ptr<OpKernel>(new Throwing(throws));
        };
      } else if (delay_us > 0) {
        factory = [inner = entry->factory,
                   delay_us](const OpKernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
          ASSIGN_OR_RETURN(auto kernel, inner(info));
          return std::unique_ptr<OpKernel>(new Delayed(std::move(kernel), delay_us));
        };
      }
      registry_.Register(def, std::move(factory));
    }
  }
  registry_.Register(KernelDefBuilder("MemcpyToHost").Domain(kOnyxDomain).Build(), MakeFactory<Memcpy<true>>());
  registry_.Register(KernelDefBuilder("MemcpyFromHost").Domain(kOnyxDomain).Build(), MakeFactory<Memcpy<false>>());
}

BFCArena& TestExecutionProvider::DeviceArena() {
  // Listed in the engine's arena stats as device "test", like a GPU's arena.
  static const std::shared_ptr<BFCArena>* arena = [] {
    static TestDeviceAllocator* device = new TestDeviceAllocator();
    auto* shared = new std::shared_ptr<BFCArena>(std::make_shared<BFCArena>(device, BFCArena::Options{}));
    RegisterDeviceArena("test", "", *shared);
    return shared;
  }();
  return **arena;
}

int64_t TestExecutionProvider::copies_to_host() { return g_to_host.load(); }
int64_t TestExecutionProvider::copies_from_host() { return g_from_host.load(); }

absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateTestExecutionProvider(const ProviderOptions& options) {
  std::set<std::string> ops;
  auto it = options.settings.find("ops");
  if (it != options.settings.end()) {
    for (absl::string_view op : absl::StrSplit(it->second, '+', absl::SkipEmpty())) ops.insert(std::string(op));
  }
  int64_t delay_us = 0;
  std::string throws;
  for (const auto& [key, value] : options.settings) {
    if (key == "throw") {
      if (value != "bad_alloc" && value != "runtime_error") {
        return absl::InvalidArgumentError("provider 'test': throw expects bad_alloc or runtime_error, received '" +
                                          value + "'");
      }
      throws = value;
    } else if (key == "delay_us") {
      if (!absl::SimpleAtoi(value, &delay_us) || delay_us < 0) {
        return absl::InvalidArgumentError("provider 'test': delay_us expects a non-negative integer, received '" +
                                          value + "'");
      }
    } else if (key != "ops") {
      return absl::InvalidArgumentError("provider 'test' has no option '" + key + "' (known: ops, delay_us, throw)");
    }
  }
  return std::unique_ptr<IExecutionProvider>(new TestExecutionProvider(std::move(ops), delay_us, throws));
}

}  // namespace onyx

ONYX_PROVIDER_LIBRARY("test", onyx::CreateTestExecutionProvider)

// Copies made by the Memcpy kernels of every test provider in the process,
// for tests that check the copies really happen (looked up with dlsym).
extern "C" __attribute__((visibility("default"))) void OnyxTestProviderCopies(int64_t* to_host, int64_t* from_host) {
  *to_host = onyx::TestExecutionProvider::copies_to_host();
  *from_host = onyx::TestExecutionProvider::copies_from_host();
}
