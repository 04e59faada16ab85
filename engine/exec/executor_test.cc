// A kernel that throws fails its run with a status naming the node (the
// executor's guard), and the session keeps serving afterwards.
#include <vector>

#include "gtest/gtest.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::ModelBuilder;
using testing::RandomFloatTensor;

ModelBuilder ReluThenSoftmax() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {4, 16}).Output("y", DataType::kFloat, {4, 16});
  m.Node("Relu", {"x"}, {"r"}, "throwing_relu");  // the test provider's kernel
  m.Node("Softmax", {"r"}, {"y"}, "consumer");
  return m;
}

TEST(ExecutorTest, AKernelRunningOutOfMemoryFailsTheRunNamingTheNode) {
  SessionOptions options;
  options.providers = {"test:ops=Relu;throw=bad_alloc"};
  auto session = InferenceSession::CreateFromBytes(ReluThenSoftmax().Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  const Feeds feeds = {{"x", Value(RandomFloatTensor({4, 16}, 1))}};
  for (int run = 0; run < 3; ++run) {  // the session stays usable: every run answers
    auto out = (*session)->Run(RunOptions(), feeds, {});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
    EXPECT_NE(out.status().message().find("throwing_relu"), std::string::npos) << out.status();
    EXPECT_NE(out.status().message().find("out of memory"), std::string::npos) << out.status();
  }
}

TEST(ExecutorTest, AKernelThrowingAnExceptionFailsTheRunWithItsMessage) {
  SessionOptions options;
  options.providers = {"test:ops=Relu;throw=runtime_error"};
  auto session = InferenceSession::CreateFromBytes(ReluThenSoftmax().Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run(RunOptions(), {{"x", Value(RandomFloatTensor({4, 16}, 2))}}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal) << out.status();
  EXPECT_NE(out.status().message().find("throwing_relu"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("test kernel failure"), std::string::npos) << out.status();
}

TEST(ExecutorTest, TheTestProviderRefusesAnUnknownThrowMode) {
  SessionOptions options;
  options.providers = {"test:ops=Relu;throw=segfault"};
  auto session = InferenceSession::CreateFromBytes(ReluThenSoftmax().Serialize(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("bad_alloc or runtime_error"), std::string::npos) << session.status();
}

}  // namespace
}  // namespace onyx
