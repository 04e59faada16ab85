// nn-family kernels run through a session on cases the ONNX node tests do not
// cover: old-opset attribute forms, reverse recurrences with sequence_lens,
// batch-major layouts, grouped ConvTranspose with output_padding, double
// Conv, and error reporting. Expected values are worked out by hand in the
// comments.
#include <algorithm>
#include <cmath>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;
using testing::RunModel;
using testing::StringsAttr;
using testing::TypedTensor;
using testing::Values;

TEST(NnOpsTest, BatchNormPerActivationParametersInOpset7) {
  // spatial=0: scale/B/mean/var hold one value per (channel, position), and
  // epsilon 0, so y = (x - mean) / sqrt(var) * scale + B exactly:
  //   (5 - 1) / 2 * 1 + 10 = 12      (-2 + 1) / 0.5 * 2 + 20 = 16
  //   (2.5 - 0.5) / 1 * 3 + 30 = 36  (-6 - 2) / 4 * 4 + 40 = 32
  // Swapping scale and B gives 21, -38, 8, -158; ignoring mean 14, -4, 37.5, 16.
  ModelBuilder m(7);
  m.Input("x", DataType::kFloat, {1, 2, 2}).Output("y", DataType::kFloat, {1, 2, 2});
  m.Initializer("s", FloatTensor({2, 2}, {1, 2, 3, 4}));
  m.Initializer("b", FloatTensor({2, 2}, {10, 20, 30, 40}));
  m.Initializer("mean", FloatTensor({2, 2}, {1, -1, 0.5f, 2}));
  m.Initializer("var", FloatTensor({2, 2}, {4, 0.25f, 1, 16}));
  auto& n = m.Node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"});
  *n.add_attribute() = IntAttr("spatial", 0);
  *n.add_attribute() = testing::FloatAttr("epsilon", 0.f);
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2, 2}, {5, -2, 2.5f, -6}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> y = Values<float>((*out)[0]);
  const std::vector<float> expected = {12, 16, 36, 32};
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << i;
}

TEST(NnOpsTest, DropoutInferenceIsIdentityWithTrueMask) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3}).Output("mask", DataType::kBool, {3});
  m.Node("Dropout", {"x"}, {"y", "mask"});
  auto out = RunModel(m, {{"x", Value(FloatTensor({3}, {1, -2, 3}))}}, {"y", "mask"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1, -2, 3}));
  EXPECT_EQ(Values<bool>((*out)[1]), std::vector<bool>({true, true, true}));
}

TEST(NnOpsTest, ReverseRnnHonoursSequenceLengths) {
  // hidden 1, W = R = 1, Relu: Ht = Xt + Ht-1 walked from each sequence's end.
  // batch 0 (length 2, X = 1, 2): t1 = 2, t0 = 3, padding step 0.
  // batch 1 (length 3, X = 1, 1, 1): t2 = 1, t1 = 2, t0 = 3.
  ModelBuilder m(14);
  m.Input("x", DataType::kFloat, {3, 2, 1}).Input("lens", DataType::kInt32, {2});
  m.Output("y", DataType::kFloat, {3, 1, 2, 1}).Output("h", DataType::kFloat, {1, 2, 1});
  m.Initializer("w", FloatTensor({1, 1, 1}, {1}));
  m.Initializer("r", FloatTensor({1, 1, 1}, {1}));
  auto& n = m.Node("RNN", {"x", "w", "r", "", "lens"}, {"y", "h"});
  *n.add_attribute() = IntAttr("hidden_size", 1);
  *n.add_attribute() = testing::StringAttr("direction", "reverse");
  *n.add_attribute() = StringsAttr("activations", {"Relu"});
  auto out = RunModel(m,
                      {{"x", Value(FloatTensor({3, 2, 1}, {1, 1, 2, 1, 100, 1}))},
                       {"lens", Value(TypedTensor<int32_t>(DataType::kInt32, {2}, {2, 3}))}},
                      {"y", "h"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({3, 3, 2, 2, 0, 1}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({3, 3}));
}

// ONNX LSTM, one direction, no peepholes, default activations, in double:
// gates in i, o, f, c order; x is [seq, batch, input], W [4H, input], R
// [4H, H], B [8H] (Wb then Rb). Returns Y as [seq, batch, H].
std::vector<double> LstmReference(const float* x, const float* w, const float* r, const float* b, int64_t seq,
                                  int64_t batch, int64_t input, int64_t hidden) {
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  std::vector<double> h(batch * hidden, 0.0), c(batch * hidden, 0.0), y;
  for (int64_t t = 0; t < seq; ++t) {
    std::vector<double> next_h(h.size());
    for (int64_t bi = 0; bi < batch; ++bi) {
      for (int64_t k = 0; k < hidden; ++k) {
        double gate[4];  // i, o, f, c
        for (int g = 0; g < 4; ++g) {
          const int64_t row = g * hidden + k;
          double sum = b[row] + b[4 * hidden + row];
          for (int64_t i = 0; i < input; ++i) sum += x[(t * batch + bi) * input + i] * w[row * input + i];
          for (int64_t j = 0; j < hidden; ++j) sum += h[bi * hidden + j] * r[row * hidden + j];
          gate[g] = sum;
        }
        double& cell = c[bi * hidden + k];
        cell = sigmoid(gate[2]) * cell + sigmoid(gate[0]) * std::tanh(gate[3]);
        next_h[bi * hidden + k] = sigmoid(gate[1]) * std::tanh(cell);
      }
    }
    h = next_h;
    y.insert(y.end(), h.begin(), h.end());
  }
  return y;
}

TEST(NnOpsTest, LstmBatchMajorLayoutMatchesSequenceMajor) {
  // The same LSTM in layout 0 and layout 1 (X and Y transposed) must both
  // match a direct evaluation of the ONNX equations.
  const int64_t seq = 3, batch = 2, input = 2, hidden = 3;
  Tensor x = RandomFloatTensor({seq, batch, input}, 1);
  Tensor x_bm = Tensor::Allocate(DataType::kFloat, {batch, seq, input});
  for (int64_t t = 0; t < seq; ++t) {
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < input; ++i) {
        x_bm.mutable_data<float>()[(b * seq + t) * input + i] = x.data<float>()[(t * batch + b) * input + i];
      }
    }
  }
  const Tensor w = RandomFloatTensor({1, 4 * hidden, input}, 2);
  const Tensor r = RandomFloatTensor({1, 4 * hidden, hidden}, 3);
  const Tensor bias = RandomFloatTensor({1, 8 * hidden}, 4);
  auto run = [&](int64_t layout, const Tensor& feed) {
    ModelBuilder m(14);
    m.Input("x", DataType::kFloat, {-1, -1, input}).Output("y", DataType::kFloat, {-1, -1, -1, -1});
    m.Initializer("w", w);
    m.Initializer("r", r);
    m.Initializer("b", bias);
    auto& n = m.Node("LSTM", {"x", "w", "r", "b"}, {"y"});
    *n.add_attribute() = IntAttr("hidden_size", hidden);
    *n.add_attribute() = IntAttr("layout", layout);
    return RunModel(m, {{"x", Value(feed)}}, {"y"});
  };
  auto seq_major = run(0, x);
  auto batch_major = run(1, x_bm);
  ASSERT_TRUE(seq_major.ok()) << seq_major.status();
  ASSERT_TRUE(batch_major.ok()) << batch_major.status();
  const std::vector<double> want =
      LstmReference(x.data<float>(), w.data<float>(), r.data<float>(), bias.data<float>(), seq, batch, input, hidden);
  const std::vector<float> a = Values<float>((*seq_major)[0]), b = Values<float>((*batch_major)[0]);
  ASSERT_EQ(a.size(), static_cast<size_t>(seq * batch * hidden));
  ASSERT_EQ(b.size(), a.size());
  for (int64_t t = 0; t < seq; ++t) {
    for (int64_t bi = 0; bi < batch; ++bi) {
      for (int64_t h = 0; h < hidden; ++h) {
        const double expected = want[(t * batch + bi) * hidden + h];
        EXPECT_NEAR(a[(t * batch + bi) * hidden + h], expected, 1e-5) << "layout 0 t" << t << " b" << bi;
        EXPECT_NEAR(b[(bi * seq + t) * hidden + h], expected, 1e-5) << "layout 1 t" << t << " b" << bi;
      }
    }
  }
}

// A bidirectional LSTM whose R is an initializer (packed for the per-step
// product when the kernel is created) and the same LSTM with R fed at run
// time (packed per run), at batches that take the packed product (1, 3) and
// the GEMM (10), on one thread and with the directions on two: every output
// matches the ONNX equations per direction (the reverse one on the reversed
// sequence). Hidden 130 makes 4 x 130 gate columns end inside a panel.
TEST(NnOpsTest, BidirectionalLstmWithConstantAndFedRecurrentWeights) {
  const int64_t seq = 4, input = 7, hidden = 130;
  const Tensor w = RandomFloatTensor({2, 4 * hidden, input}, 11);
  const Tensor r = RandomFloatTensor({2, 4 * hidden, hidden}, 12);
  const Tensor bias = RandomFloatTensor({2, 8 * hidden}, 13);
  for (int64_t batch : {1, 3, 10}) {
    const Tensor x = RandomFloatTensor({seq, batch, input}, 14 + batch);
    std::vector<std::vector<double>> want(2);
    for (int d = 0; d < 2; ++d) {
      std::vector<float> xs(x.data<float>(), x.data<float>() + seq * batch * input);
      if (d == 1) {  // the reverse direction reads the sequence from its end
        for (int64_t t = 0; t < seq; ++t) {
          std::copy_n(x.data<float>() + (seq - 1 - t) * batch * input, batch * input, xs.data() + t * batch * input);
        }
      }
      want[d] =
          LstmReference(xs.data(), w.data<float>() + d * 4 * hidden * input, r.data<float>() + d * 4 * hidden * hidden,
                        bias.data<float>() + d * 8 * hidden, seq, batch, input, hidden);
    }
    for (bool constant_r : {true, false}) {
      for (int threads : {1, 2}) {
        ModelBuilder m(14);
        m.Input("x", DataType::kFloat, {seq, batch, input}).Output("y", DataType::kFloat, {-1, -1, -1, -1});
        if (constant_r) {
          m.Initializer("r", r);
        } else {
          m.Input("r", DataType::kFloat, {2, 4 * hidden, hidden});
        }
        m.Initializer("w", w);
        m.Initializer("b", bias);
        auto& n = m.Node("LSTM", {"x", "w", "r", "b"}, {"y"});
        *n.add_attribute() = IntAttr("hidden_size", hidden);
        *n.add_attribute() = testing::StringAttr("direction", "bidirectional");
        Feeds feeds = {{"x", Value(x)}};
        if (!constant_r) feeds.push_back({"r", Value(r)});
        auto out = RunModel(m, feeds, {"y"}, threads);
        ASSERT_TRUE(out.ok()) << out.status();
        const std::vector<float> y = Values<float>((*out)[0]);  // [seq, 2, batch, hidden]
        ASSERT_EQ(y.size(), static_cast<size_t>(seq * 2 * batch * hidden));
        double worst = 0;
        for (int64_t t = 0; t < seq; ++t) {
          for (int d = 0; d < 2; ++d) {
            const int64_t tr = d == 0 ? t : seq - 1 - t;  // the reference's step of output time t
            for (int64_t i = 0; i < batch * hidden; ++i) {
              worst =
                  std::max(worst, std::fabs(y[(t * 2 + d) * batch * hidden + i] - want[d][tr * batch * hidden + i]));
            }
          }
        }
        EXPECT_LE(worst, 2e-5) << "batch " << batch << (constant_r ? ", R constant" : ", R fed") << ", " << threads
                               << " thread(s)";
      }
    }
  }
}

TEST(NnOpsTest, GroupedConvTransposeWithOutputPadding) {
  // Two groups of one 1x1 channel each (values 1 and 2), 2x2 kernels {1, 2, 3,
  // 4} and {10, 20, 30, 40}, stride 2, output_padding 1: out = 2 * 0 + 1 + 2 =
  // 3 per side; each channel's kernel times its input lands unflipped in the
  // top-left 2x2, the padded row and column are 0.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 2, 1, 1}).Output("y", DataType::kFloat, {1, 2, 3, 3});
  m.Initializer("w", FloatTensor({2, 1, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40}));
  auto& n = m.Node("ConvTranspose", {"x", "w"}, {"y"});
  *n.add_attribute() = IntAttr("group", 2);
  *n.add_attribute() = IntsAttr("strides", {2, 2});
  *n.add_attribute() = IntsAttr("output_padding", {1, 1});
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2, 1, 1}, {1, 2}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1, 2, 0, 3, 4, 0, 0, 0, 0, 20, 40, 0, 60, 80, 0, 0, 0, 0}));
}

TEST(NnOpsTest, ConvTransposeTapsOverlapInOrder) {
  // 1-D in a 2-D op: x = {1, 2}, kernel {1, 10, 100}, stride 1: y[j] = sum over
  // i of x[i] * w[j - i] = {1, 10 + 2, 100 + 20, 200}. A flipped kernel gives
  // {100, 210, 21, 2}.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 1, 1, 2}).Output("y", DataType::kFloat, {1, 1, 1, 4});
  m.Initializer("w", FloatTensor({1, 1, 1, 3}, {1, 10, 100}));
  m.Node("ConvTranspose", {"x", "w"}, {"y"});
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 1, 1, 2}, {1, 2}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1, 12, 120, 200}));
}

TEST(NnOpsTest, ConvComputesInDouble) {
  // [1, 2, 3] correlated with kernel [1, 10] plus bias 0.5: {1 + 20, 2 + 30} +
  // 0.5. A flipped kernel (true convolution) gives {12.5, 23.5}.
  ModelBuilder m(11);
  m.Input("x", DataType::kDouble, {1, 1, 3}).Output("y", DataType::kDouble, {1, 1, 2});
  m.Initializer("w", TypedTensor<double>(DataType::kDouble, {1, 1, 2}, {1, 10}));
  m.Initializer("b", TypedTensor<double>(DataType::kDouble, {1}, {0.5}));
  m.Node("Conv", {"x", "w", "b"}, {"y"});
  auto out = RunModel(m, {{"x", Value(TypedTensor<double>(DataType::kDouble, {1, 1, 3}, {1, 2, 3}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<double>((*out)[0]), std::vector<double>({21.5, 32.5}));
}

TEST(NnOpsTest, ConvGroupMismatchIsInvalidArgument) {
  ModelBuilder m(11);
  m.Input("x", DataType::kFloat, {1, 3, 2, 2}).Output("y", DataType::kFloat, {-1, -1, -1, -1});
  m.Initializer("w", FloatTensor({2, 3, 1, 1}, {1, 1, 1, 1, 1, 1}));
  *m.Node("Conv", {"x", "w"}, {"y"}).add_attribute() = IntAttr("group", 2);
  auto out = RunModel(m, {{"x", Value(RandomFloatTensor({1, 3, 2, 2}, 5))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
}

TEST(NnOpsTest, LayerNormalizationReturnsStatistics) {
  // Rows {1, 2, 6} (mean 3, variance 14/3) and {-3, 0, 0} (mean -1, variance
  // 2), normalized over the last axis, then y = n * scale + B with scale {2,
  // -1, 0.5} and B {0.5, 1, -1}: every element and statistic differs.
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {2, 3});
  m.Output("mean", DataType::kFloat, {2, 1}).Output("inv", DataType::kFloat, {2, 1});
  const std::vector<double> x = {1, 2, 6, -3, 0, 0}, scale = {2, -1, 0.5}, bias = {0.5, 1, -1};
  m.Initializer("s", FloatTensor({3}, {2, -1, 0.5f}));
  m.Initializer("b", FloatTensor({3}, {0.5f, 1, -1}));
  m.Node("LayerNormalization", {"x", "s", "b"}, {"y", "mean", "inv"});
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 3}, {1, 2, 6, -3, 0, 0}))}}, {"y", "mean", "inv"});
  ASSERT_TRUE(out.ok()) << out.status();
  const double means[2] = {3, -1};
  const double inv[2] = {1 / std::sqrt(14.0 / 3 + 1e-5), 1 / std::sqrt(2 + 1e-5)};
  const std::vector<float> y = Values<float>((*out)[0]);
  ASSERT_EQ(y.size(), 6u);
  for (int row = 0; row < 2; ++row) {
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(y[row * 3 + k], (x[row * 3 + k] - means[row]) * inv[row] * scale[k] + bias[k], 1e-5)
          << row << "," << k;
    }
    EXPECT_NEAR(Values<float>((*out)[1])[row], means[row], 1e-6) << row;
    EXPECT_NEAR(Values<float>((*out)[2])[row], inv[row], 1e-6) << row;
  }
}

// Y alone (the fast path inference graphs take), over rows of 7 and 300
// values with non-symmetric scale and bias, against the formula in double;
// and over the last two axes.
TEST(NnOpsTest, LayerNormalizationOutputAloneMatchesTheFormula) {
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{5, 7}, std::vector<int64_t>{2, 3, 300}}) {
    for (int64_t axis : {int64_t{-1}, int64_t{-2}}) {
      ModelBuilder m(17);
      m.Input("x", DataType::kFloat, dims).Output("y", DataType::kFloat, dims);
      const int64_t norm_axes = -axis;
      std::vector<int64_t> norm_dims(dims.end() - norm_axes, dims.end());
      int64_t len = 1;
      for (int64_t d : norm_dims) len *= d;
      const Tensor scale = RandomFloatTensor(norm_dims, 41), bias = RandomFloatTensor(norm_dims, 42);
      m.Initializer("s", scale).Initializer("b", bias);
      *m.Node("LayerNormalization", {"x", "s", "b"}, {"y"}).add_attribute() = IntAttr("axis", axis);
      Tensor x = RandomFloatTensor(dims, 43);
      for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_data<float>()[i] = 3.f * x.data<float>()[i] + 1.5f;
      auto out = RunModel(m, {{"x", Value(x)}}, {"y"});
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<float> y = Values<float>((*out)[0]);
      double worst = 0;
      for (int64_t r = 0; r < x.num_elements() / len; ++r) {
        const float* row = x.data<float>() + r * len;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < len; ++i) mean += row[i];
        mean /= len;
        for (int64_t i = 0; i < len; ++i) var += (row[i] - mean) * (row[i] - mean);
        var /= len;
        for (int64_t i = 0; i < len; ++i) {
          const double want = (row[i] - mean) / std::sqrt(var + 1e-5) * scale.data<float>()[i] + bias.data<float>()[i];
          worst = std::max(worst, std::fabs(y[r * len + i] - want));
        }
      }
      EXPECT_LT(worst, 2e-5) << "dims " << dims.size() << " axis " << axis;
    }
  }
}

TEST(NnOpsTest, NonMaxSuppressionScoreThresholdCanSelectNothing) {
  ModelBuilder m(11);
  m.Input("boxes", DataType::kFloat, {1, 1, 4}).Input("scores", DataType::kFloat, {1, 1, 1});
  m.Output("idx", DataType::kInt64, {-1, 3});
  m.Initializer("max", Int64Tensor({1}, {5}));
  m.Initializer("iou", FloatTensor({1}, {0.5f}));
  m.Initializer("score", FloatTensor({1}, {0.9f}));
  m.Node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "score"}, {"idx"});
  auto out = RunModel(
      m, {{"boxes", Value(FloatTensor({1, 1, 4}, {0, 0, 1, 1}))}, {"scores", Value(FloatTensor({1, 1, 1}, {0.5f}))}},
      {"idx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().dims(), Dims({0, 3}));
}

TEST(NnOpsTest, GridSampleIdentityGridReproducesInput) {
  // With align_corners, grid points -1 and 1 are the corner pixel centres.
  ModelBuilder m(16);
  m.Input("x", DataType::kFloat, {1, 1, 2, 2}).Input("g", DataType::kFloat, {1, 2, 2, 2});
  m.Output("y", DataType::kFloat, {1, 1, 2, 2});
  *m.Node("GridSample", {"x", "g"}, {"y"}).add_attribute() = IntAttr("align_corners", 1);
  auto out = RunModel(m,
                      {{"x", Value(FloatTensor({1, 1, 2, 2}, {1, 2, 3, 4}))},
                       {"g", Value(FloatTensor({1, 2, 2, 2}, {-1, -1, 1, -1, -1, 1, 1, 1}))}},
                      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1, 2, 3, 4}));
}

TEST(NnOpsTest, LrnWithoutSizeFailsAtCreation) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 1, 1, 1}).Output("y", DataType::kFloat, {1, 1, 1, 1});
  *m.Node("LRN", {"x"}, {"y"}).add_attribute() = IntAttr("size", 0);
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 1, 1, 1}, {1}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("size"), std::string::npos) << out.status();
}

// 2-D float pooling has its own loop; the double path is the generic N-D one.
// Both must agree on every geometry, including windows that lie partly or
// wholly in the padding, dilations and count_include_pad.
TEST(NnOpsTest, FloatPlanePoolingMatchesTheGenericPath) {
  struct Case {
    const char* op;
    std::vector<int64_t> kernel, strides, pads, dilations;
    int64_t count_include_pad;
  };
  const std::vector<Case> cases = {
      {"MaxPool", {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0},
      {"MaxPool", {2, 3}, {1, 2}, {0, 2, 1, 0}, {2, 1}, 0},
      {"MaxPool", {3, 3}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 0},  // corner windows reach 2 rows into the padding
      {"AveragePool", {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0},
      {"AveragePool", {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1},
      {"AveragePool", {2, 4}, {3, 1}, {1, 0, 0, 3}, {1, 1}, 1},
  };
  const Tensor x = RandomFloatTensor({2, 3, 7, 9}, 41);
  Tensor x_double = Tensor::Allocate(DataType::kDouble, x.dims());
  for (int64_t i = 0; i < x.num_elements(); ++i) x_double.mutable_data<double>()[i] = x.data<float>()[i];
  for (const Case& c : cases) {
    std::vector<Value> results;
    for (DataType type : {DataType::kFloat, DataType::kDouble}) {
      ModelBuilder m(13);
      m.Input("x", type, {2, 3, 7, 9}).Output("y", type, {-1, -1, -1, -1});
      onnx::NodeProto& node = m.Node(c.op, {"x"}, {"y"});
      *node.add_attribute() = IntsAttr("kernel_shape", c.kernel);
      *node.add_attribute() = IntsAttr("strides", c.strides);
      *node.add_attribute() = IntsAttr("pads", c.pads);
      if (std::string(c.op) == "MaxPool") {
        *node.add_attribute() = IntsAttr("dilations", c.dilations);  // AveragePool has them from opset 19
      } else {
        *node.add_attribute() = IntAttr("count_include_pad", c.count_include_pad);
      }
      auto y = RunModel(m, {{"x", Value(type == DataType::kFloat ? x : x_double)}}, {"y"});
      ASSERT_TRUE(y.ok()) << c.op << ": " << y.status();
      results.push_back((*y)[0]);
    }
    const Tensor& f = results[0].tensor();
    const Tensor& d = results[1].tensor();
    ASSERT_EQ(f.dims(), d.dims()) << c.op;
    for (int64_t i = 0; i < f.num_elements(); ++i) {
      EXPECT_NEAR(f.data<float>()[i], d.data<double>()[i], 1e-6) << c.op << " element " << i;
    }
  }
}

// ImageScaler has no schema in today's ONNX (an experimental op of opsets
// 1-9); the model still loads, and y = scale * x + bias[channel].
TEST(NnOpsTest, ImageScalerScalesAndShiftsEachChannel) {
  ModelBuilder m(8);
  m.Input("x", DataType::kFloat, {1, 2, 1, 3}).Output("y", DataType::kFloat, {1, 2, 1, 3});
  onnx::NodeProto& node = m.Node("ImageScaler", {"x"}, {"y"});
  *node.add_attribute() = testing::FloatAttr("scale", 0.5f);
  onnx::AttributeProto bias;
  bias.set_name("bias");
  bias.set_type(onnx::AttributeProto::FLOATS);
  bias.add_floats(10.f);
  bias.add_floats(-1.f);
  *node.add_attribute() = bias;
  auto y = RunModel(m, {{"x", Value(FloatTensor({1, 2, 1, 3}, {2, 4, 6, 8, 10, 12}))}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<float>((*y)[0]), (std::vector<float>{11, 12, 13, 3, 4, 5}));

  // A bias with the wrong number of channels is refused, naming both counts.
  ModelBuilder bad(8);
  bad.Input("x", DataType::kFloat, {1, 3, 1, 1}).Output("y", DataType::kFloat, {1, 3, 1, 1});
  onnx::NodeProto& bad_node = bad.Node("ImageScaler", {"x"}, {"y"});
  *bad_node.add_attribute() = bias;
  auto refused = RunModel(bad, {{"x", Value(FloatTensor({1, 3, 1, 1}, {1, 2, 3}))}}, {"y"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'bias' has 2 values, expected 3"), std::string::npos) << refused.status();
}

// BatchNormalization before opset 7 carries is_test and consumed_inputs;
// inference computes the same normalisation.
TEST(NnOpsTest, BatchNormBeforeOpset7IgnoresIsTest) {
  ModelBuilder m(6);
  m.Input("x", DataType::kFloat, {1, 2, 1, 2}).Output("y", DataType::kFloat, {1, 2, 1, 2});
  m.Initializer("scale", FloatTensor({2}, {2.f, 1.f}));
  m.Initializer("bias", FloatTensor({2}, {1.f, 0.f}));
  m.Initializer("mean", FloatTensor({2}, {1.f, -1.f}));
  m.Initializer("var", FloatTensor({2}, {4.f, 1.f}));
  onnx::NodeProto& node = m.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  *node.add_attribute() = IntAttr("is_test", 1);
  *node.add_attribute() = testing::FloatAttr("epsilon", 0.f);
  auto y = RunModel(m, {{"x", Value(FloatTensor({1, 2, 1, 2}, {3, 5, 0, 1}))}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  // (x - mean) / sqrt(var) * scale + bias per channel.
  EXPECT_EQ(Values<float>((*y)[0]), (std::vector<float>{3, 5, 1, 2}));
}

}  // namespace
}  // namespace onyx
