// A test-only execution provider that behaves like an accelerator without one:
// it claims a configurable set of ops (running the CPU kernels for them), lives
// on its own "device" so the partitioner inserts Memcpy nodes at every
// boundary, and counts the copies it performs.
//
//   SessionOptions options;
//   options.providers = {"test:ops=Relu+Add"};   // claims Relu and Add only
//   options.providers = {"test:ops=Relu;delay_us=200"};  // each kernel sleeps first
//   options.providers = {"test:ops=Relu;throw=bad_alloc"};  // each kernel throws
//     (bad_alloc or runtime_error: what the executor must turn into a status)
//
// Its kernels run on the session's test-device stream, a thread of its own, so
// waits between that lane and CPU lanes are real.
//
// Built as the provider library libonyx_provider_test.so, which the test
// runtime (providers/builtin_providers.cc built with ONYX_WITH_TEST_PROVIDER)
// lets the loader find: so the loader, the handshake and the library boundary
// are exercised on every machine. Besides its entry point it exports
// OnyxTestProviderCopies(int64_t* to_host, int64_t* from_host), the copy
// counts below, and its device arena is listed in the engine's arena stats as
// device "test". Thread-safe.
#pragma once

#include <atomic>
#include <set>
#include <string>

#include "framework/execution_provider.h"

namespace onyx {

class TestExecutionProvider final : public IExecutionProvider {
 public:
  // `throws`: "", "bad_alloc" or "runtime_error".
  TestExecutionProvider(std::set<std::string> ops, int64_t delay_us, std::string throws = "");

  const char* name() const override { return "test"; }
  const char* device() const override { return "test"; }
  const KernelRegistry& kernel_registry() const override { return registry_; }
  std::unique_ptr<Stream> CreateStream() const override { return MakeThreadStream(); }
  // "Device" memory: an arena of its own, so values on the device are never
  // host buffers and every boundary crossing is a real copy between arenas.
  BFCArena* arena() const override { return &DeviceArena(); }
  static BFCArena& DeviceArena();

  // Copies performed by Memcpy nodes of all test providers in this process.
  static int64_t copies_to_host();
  static int64_t copies_from_host();

 private:
  KernelRegistry registry_;
};

// The provider's factory. Options: ops=Op1+Op2 (the ops it claims), delay_us=N
// (each kernel sleeps first); INVALID_ARGUMENT naming any other option or a
// bad value.
absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateTestExecutionProvider(const ProviderOptions& options);

}  // namespace onyx
