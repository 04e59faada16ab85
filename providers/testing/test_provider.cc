#include "providers/testing/test_provider.h"

#include "absl/strings/str_split.h"
#include "onyx/status_macros.h"
#include "partition/partitioner.h"
#include "providers/cpu/cpu_provider.h"

namespace onyx {
namespace {

std::atomic<int64_t> g_to_host{0};
std::atomic<int64_t> g_from_host{0};

// Copies its input into a fresh buffer, as a device transfer would.
template <bool kToHost>
class Memcpy final : public OpKernel {
 public:
  explicit Memcpy(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Value* v = ctx.InputValue(0);
    if (v == nullptr || !v->is_tensor()) return ctx.Error("Memcpy copies tensors only");
    ctx.SetOutput(0, Value(v->tensor().Clone()));
    (kToHost ? g_to_host : g_from_host).fetch_add(1);
    return absl::OkStatus();
  }
};

}  // namespace

TestExecutionProvider::TestExecutionProvider(std::set<std::string> ops) {
  const KernelRegistry& cpu = CpuKernelRegistry();
  for (const auto& [domain, op] : cpu.Ops()) {
    if (!domain.empty() || !ops.count(op)) continue;
    for (const auto* entry : cpu.Entries(domain, op)) {
      KernelDef def = entry->def;
      def.provider = "test";
      registry_.Register(def, entry->factory);
    }
  }
  registry_.Register(KernelDefBuilder("MemcpyToHost").Domain(kOnyxDomain).Build(), MakeFactory<Memcpy<true>>());
  registry_.Register(KernelDefBuilder("MemcpyFromHost").Domain(kOnyxDomain).Build(), MakeFactory<Memcpy<false>>());
}

int64_t TestExecutionProvider::copies_to_host() { return g_to_host.load(); }
int64_t TestExecutionProvider::copies_from_host() { return g_from_host.load(); }

ONYX_REGISTER_PROVIDER(test, [](const ProviderOptions& options)
                                 -> absl::StatusOr<std::unique_ptr<IExecutionProvider>> {
  std::set<std::string> ops;
  auto it = options.settings.find("ops");
  if (it != options.settings.end()) {
    for (absl::string_view op : absl::StrSplit(it->second, '+', absl::SkipEmpty())) ops.insert(std::string(op));
  }
  for (const auto& [key, value] : options.settings) {
    if (key != "ops") {
      return absl::InvalidArgumentError("provider 'test' has no option '" + key + "' (known: ops)");
    }
  }
  return std::unique_ptr<IExecutionProvider>(new TestExecutionProvider(std::move(ops)));
});

}  // namespace onyx
