// Per-group arenas: separate accounting, lifetime tied to sessions and to the
// tensors they returned, the limit, and the shared arena's default.
#include "framework/device_arena.h"

#include <algorithm>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "onyx/memory.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::ModelBuilder;

constexpr int64_t kRows = 4;
constexpr int64_t kCols = 1024;
constexpr int64_t kTensorBytes = kRows * kCols * sizeof(float);  // 16 KiB, a multiple of the 256 B chunk

// y = Relu(x + b): one intermediate ("s") and one output per run.
std::string AddRelu() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {kRows, kCols});
  m.Output("y", DataType::kFloat, {kRows, kCols});
  Tensor b = Tensor::Allocate(DataType::kFloat, {kRows, kCols});
  for (int64_t i = 0; i < b.num_elements(); ++i) b.mutable_data<float>()[i] = 0.5f;
  m.Initializer("b", b);
  m.Node("Add", {"x", "b"}, {"s"});
  m.Node("Relu", {"s"}, {"y"});
  return m.Serialize();
}

// x[i] = i - 100, so y[i] = max(i - 99.5, 0).
Feeds Input() {
  Tensor x = Tensor::Allocate(DataType::kFloat, {kRows, kCols});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_data<float>()[i] = static_cast<float>(i) - 100.0f;
  return {{"x", Value(x)}};
}

void ExpectOutput(const Tensor& y) {
  ASSERT_EQ(y.num_elements(), kRows * kCols);
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    ASSERT_EQ(y.data<float>()[i], std::max(static_cast<float>(i) - 99.5f, 0.0f)) << "element " << i;
  }
}

std::unique_ptr<InferenceSession> Session(const std::string& group, int64_t limit = 0) {
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;  // keep the intermediate
  options.enable_mem_pattern = false;                        // one arena chunk per tensor
  options.model_name = "addrelu";
  options.arena_group = group;
  options.arena_limit_bytes = limit;
  auto session = InferenceSession::CreateFromBytes(AddRelu(), options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

const ArenaStats* Find(const std::vector<ArenaStats>& stats, const std::string& group) {
  for (const ArenaStats& s : stats) {
    if (s.group == group) return &s;
  }
  return nullptr;
}

TEST(DeviceArenaTest, GroupsKeepSeparateExactStats) {
  auto a = Session("test/a");
  auto b1 = Session("test/b");
  auto b2 = Session("test/b");  // same group: same arena
  ASSERT_TRUE(a && b1 && b2);
  auto ya = a->Run(RunOptions(), Input(), {});
  auto yb1 = b1->Run(RunOptions(), Input(), {});
  auto yb2 = b2->Run(RunOptions(), Input(), {});
  ASSERT_TRUE(ya.ok() && yb1.ok() && yb2.ok());

  const std::vector<ArenaStats> stats = GetArenaStats();
  const ArenaStats* sa = Find(stats, "test/a");
  const ArenaStats* sb = Find(stats, "test/b");
  ASSERT_NE(sa, nullptr);
  ASSERT_NE(sb, nullptr);
  EXPECT_EQ(sa->device, "cpu");
  // Each run: one chunk for "s" (freed at the end) and one for "y" (held here).
  EXPECT_EQ(sa->allocations, 2);
  EXPECT_EQ(sa->in_use_bytes, kTensorBytes);
  EXPECT_EQ(sa->peak_in_use_bytes, 2 * kTensorBytes);
  EXPECT_EQ(sb->allocations, 4);
  EXPECT_EQ(sb->in_use_bytes, 2 * kTensorBytes);
  EXPECT_GE(sb->reserved_bytes, sb->in_use_bytes);

  const std::string logs = DumpArenaLogs();
  EXPECT_NE(logs.find("arena on cpu, group 'test/a'"), std::string::npos) << logs;
  EXPECT_NE(logs.find("arena on cpu, group 'test/b'"), std::string::npos) << logs;
}

TEST(DeviceArenaTest, ArenaGoesWithItsLastSessionAndTensor) {
  auto session = Session("test/lifetime");
  ASSERT_TRUE(session);
  auto y = session->Run(RunOptions(), Input(), {});
  ASSERT_TRUE(y.ok()) << y.status();
  session.reset();
  // The output holds the arena: it is still listed and the bytes still valid.
  const ArenaStats* held = nullptr;
  std::vector<ArenaStats> stats = GetArenaStats();
  held = Find(stats, "test/lifetime");
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->in_use_bytes, kTensorBytes);
  ExpectOutput((*y)[0].tensor());

  y->clear();
  EXPECT_EQ(Find(GetArenaStats(), "test/lifetime"), nullptr);
}

TEST(DeviceArenaTest, NewSessionOfALiveGroupSharesItsArena) {
  auto first = Session("test/reuse");
  ASSERT_TRUE(first);
  ASSERT_TRUE(first->Run(RunOptions(), Input(), {}).ok());
  auto second = Session("test/reuse");
  ASSERT_TRUE(second);
  first.reset();
  ASSERT_TRUE(second->Run(RunOptions(), Input(), {}).ok());
  const std::vector<ArenaStats> stats = GetArenaStats();
  const ArenaStats* s = Find(stats, "test/reuse");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->allocations, 4);
  EXPECT_EQ(s->in_use_bytes, 0);  // both outputs were dropped
}

TEST(DeviceArenaTest, LimitReturnsResourceExhaustedNamingGroupAndLimit) {
  // Room for one tensor but not for the intermediate and the output together.
  const int64_t limit = kTensorBytes + kTensorBytes / 2;
  auto session = Session("test/limited", limit);
  ASSERT_TRUE(session);
  auto y = session->Run(RunOptions(), Input(), {});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kResourceExhausted) << y.status();
  const std::string message(y.status().message());
  EXPECT_NE(message.find("'test/limited'"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(limit)), std::string::npos) << message;
}

TEST(DeviceArenaTest, SessionsOfAGroupMustAgreeOnTheLimit) {
  auto first = Session("test/agree", 1 << 20);
  ASSERT_TRUE(first);
  SessionOptions options;
  options.model_name = "addrelu";
  options.arena_group = "test/agree";
  options.arena_limit_bytes = 2 << 20;
  auto second = InferenceSession::CreateFromBytes(AddRelu(), options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(second.status().message());
  EXPECT_NE(message.find("'test/agree'"), std::string::npos) << message;
  EXPECT_NE(message.find("1048576"), std::string::npos) << message;
  EXPECT_NE(message.find("2097152"), std::string::npos) << message;
  first.reset();
  // Once the group is gone, a new limit is accepted.
  EXPECT_TRUE(InferenceSession::CreateFromBytes(AddRelu(), options).ok());
}

TEST(DeviceArenaTest, DefaultGroupIsTheSharedArena) {
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;
  options.enable_mem_pattern = false;
  auto session = InferenceSession::CreateFromBytes(AddRelu(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  const int64_t before = CpuArena().GetStats().allocations;
  auto y = (*session)->Run(RunOptions(), Input(), {});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(CpuArena().GetStats().allocations - before, 2);
  const std::vector<ArenaStats> stats = GetArenaStats();
  EXPECT_NE(Find(stats, ""), nullptr);

  options.arena_limit_bytes = 1024;
  auto limited = InferenceSession::CreateFromBytes(AddRelu(), options);
  ASSERT_FALSE(limited.ok());
  EXPECT_EQ(limited.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onyx
