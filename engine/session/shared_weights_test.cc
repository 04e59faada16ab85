#include "session/shared_weights.h"

#include "gtest/gtest.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::ModelBuilder;
using testing::RandomFloatTensor;

ModelBuilder Linear() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 64}).Output("y", DataType::kFloat, {-1, 32});
  m.Initializer("w", RandomFloatTensor({64, 32}, 1));
  m.Initializer("b", RandomFloatTensor({32}, 2));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  m.Node("Add", {"xw", "b"}, {"y"});
  return m;
}

TEST(SharedWeightsTest, BucketSessionsKeepOneCopyAndAgree) {
  std::vector<std::unique_ptr<InferenceSession>> sessions;
  for (int batch : {1, 2, 4, 8}) {
    SessionOptions options;
    options.shared_weights_group = "linear/1";
    options.input_shape_overrides["x"] = {batch, -1};
    auto s = InferenceSession::CreateFromBytes(Linear().Serialize(), options);
    ASSERT_TRUE(s.ok()) << s.status();
    sessions.push_back(*std::move(s));
  }
  EXPECT_EQ(SharedWeightsCount("linear/1"), 2u);  // w and b, once for all four sessions
  Tensor x = RandomFloatTensor({1, 64}, 3);
  auto a = sessions[0]->Run(RunOptions(), {{"x", Value(x)}}, {});
  SessionOptions alone;
  auto reference = InferenceSession::CreateFromBytes(Linear().Serialize(), alone);
  ASSERT_TRUE(reference.ok());
  auto b = (*reference)->Run(RunOptions(), {{"x", Value(x)}}, {});
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 32; ++i) EXPECT_EQ((*a)[0].tensor().data<float>()[i], (*b)[0].tensor().data<float>()[i]);
  sessions.clear();
  EXPECT_EQ(SharedWeightsCount("linear/1"), 0u) << "the group dies with its last session";
}

}  // namespace
}  // namespace onyx
