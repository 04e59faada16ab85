#include "partition/partitioner.h"

#include <dlfcn.h>

#include "gtest/gtest.h"
#include "onyx/memory.h"
#include "onyx/session.h"
#include "session/provider_loader.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::ModelBuilder;

// Copies made so far by the test provider's Memcpy kernels (its library
// exports the count).
int64_t TestProviderCopies() {
  auto library = LoadProviderLibrary("test");
  EXPECT_TRUE(library.ok()) << library.status();
  if (!library.ok()) return -1;
  auto copies = reinterpret_cast<void (*)(int64_t*, int64_t*)>(dlsym((*library)->handle, "OnyxTestProviderCopies"));
  EXPECT_NE(copies, nullptr);
  if (copies == nullptr) return -1;
  int64_t to_host = 0, from_host = 0;
  copies(&to_host, &from_host);
  return to_host + from_host;
}

ArenaStats TestDeviceArenaStats() {
  for (const ArenaStats& a : GetArenaStats()) {
    if (a.device == "test") return a;
  }
  ADD_FAILURE() << "no arena of device 'test' is listed";
  return {};
}

// x -> Relu -> Softmax -> Add(x) -> y, with the test device claiming Relu and Add.
ModelBuilder Chain() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {2, 3});
  m.Node("Relu", {"x"}, {"r"}, "relu");
  m.Node("Softmax", {"r"}, {"s"}, "softmax");
  m.Node("Add", {"s", "x"}, {"y"}, "add");
  return m;
}

TEST(PartitionerTest, CountsFallbackCopiesAndPartitionsExactly) {
  SessionOptions options;
  options.providers = {"test:ops=Relu+Add"};
  auto session = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  const PartitionReport& r = (*session)->partition_report();
  // test: FromHost(x), Relu, ToHost(r), FromHost(s), Add, ToHost(y); cpu: Softmax.
  EXPECT_EQ(r.nodes_per_provider.at("test"), 6);
  EXPECT_EQ(r.nodes_per_provider.at("cpu"), 1);
  EXPECT_EQ(r.memcpy_nodes, 4);
  ASSERT_EQ(r.fallback_nodes.size(), 1u);
  EXPECT_EQ(r.fallback_nodes[0].node, "softmax");
  EXPECT_EQ(r.fallback_nodes[0].provider, "test");
  EXPECT_NE(r.fallback_nodes[0].reason.find("no kernel for op Softmax"), std::string::npos);
  EXPECT_EQ(r.partitions, 3);  // test, cpu, test

  // The copies really happen, and the results equal a CPU-only run.
  Feeds feeds = {{"x", Value(testing::RandomFloatTensor({2, 3}, 1))}};
  int64_t before = TestProviderCopies();
  auto out = (*session)->Run(RunOptions(), feeds, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(TestProviderCopies() - before, 4);
  // Device values lived in the device arena, and were all freed by run end.
  ArenaStats device = TestDeviceArenaStats();
  EXPECT_GE(device.allocations, 4);  // x and s copied in, r and y computed there
  EXPECT_EQ(device.in_use_bytes, 0);
  auto cpu = InferenceSession::CreateFromBytes(Chain().Serialize(), {});
  ASSERT_TRUE(cpu.ok());
  auto expected = (*cpu)->Run(RunOptions(), feeds, {});
  ASSERT_TRUE(expected.ok());
  for (int i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ((*out)[0].tensor().data<float>()[i], (*expected)[0].tensor().data<float>()[i]);
  }
}

TEST(PartitionerTest, CpuOnlyHasNoFallbackAndOnePartition) {
  auto session = InferenceSession::CreateFromBytes(Chain().Serialize(), {});
  ASSERT_TRUE(session.ok());
  const PartitionReport& r = (*session)->partition_report();
  EXPECT_EQ(r.nodes_per_provider.at("cpu"), 3);
  EXPECT_EQ(r.partitions, 1);
  EXPECT_EQ(r.memcpy_nodes, 0);
  EXPECT_TRUE(r.fallback_nodes.empty());
}

TEST(PartitionerTest, FallbackGateFailsCreateWithTheReport) {
  SessionOptions options;
  options.providers = {"test:ops=Relu+Add"};
  options.max_cpu_fallback_nodes = 0;
  auto session = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(session.status()));
  EXPECT_NE(session.status().message().find("max_cpu_fallback_nodes=0"), absl::string_view::npos);
  EXPECT_NE(session.status().message().find("Softmax 'softmax' declined by test"), absl::string_view::npos)
      << session.status();
  options.max_cpu_fallback_nodes = 1;
  EXPECT_TRUE(InferenceSession::CreateFromBytes(Chain().Serialize(), options).ok());
}

TEST(PartitionerTest, UnknownProviderIsNamed) {
  SessionOptions options;
  options.providers = {"warp_drive"};
  options.require_providers = true;
  auto session = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  EXPECT_TRUE(absl::IsNotFound(session.status()));
  EXPECT_NE(session.status().message().find("'warp_drive'"), absl::string_view::npos) << session.status();
  // A name no provider library can have is an error, required or not.
  options.providers = {"warp-drive"};
  options.require_providers = false;
  session = InferenceSession::CreateFromBytes(Chain().Serialize(), options);
  EXPECT_TRUE(absl::IsInvalidArgument(session.status()));
  EXPECT_NE(session.status().message().find("warp-drive"), absl::string_view::npos) << session.status();
}

}  // namespace
}  // namespace onyx
