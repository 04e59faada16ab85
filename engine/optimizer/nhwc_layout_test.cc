// The channels-last layout pass on small networks of the shapes CNNs have:
// each graph's outputs equal the unoptimised graph's (NCHW kernels, the
// reference pooling loops) on random inputs, and its op histogram shows what
// ran channels-last and how many layout conversions are left.
#include "optimizer/nhwc_layout.h"

#include "gtest/gtest.h"
#include "optimizer/optimizer_test_util.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::CompareLevels;
using testing::Count;
using testing::FloatAttr;
using testing::FloatsAttr;
using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;
using testing::StringAttr;

onnx::NodeProto& Conv(ModelBuilder& m, const std::string& x, const std::string& y, int64_t in, int64_t out, int64_t k,
                      uint32_t seed, int64_t group = 1, int64_t stride = 1) {
  m.Initializer(y + "_w", RandomFloatTensor({out, in / group, k, k}, seed));
  m.Initializer(y + "_b", RandomFloatTensor({out}, seed + 1));
  auto& n = m.Node("Conv", {x, y + "_w", y + "_b"}, {y});
  *n.add_attribute() = IntsAttr("pads", {k / 2, k / 2, k / 2, k / 2});
  *n.add_attribute() = IntsAttr("strides", {stride, stride});
  *n.add_attribute() = IntAttr("group", group);
  return n;
}

// Stem, max pool, a residual block, global pool and a classifier: the stem
// reads the image channels first, and one conversion is left (before
// Flatten).
TEST(NhwcLayoutTest, ResidualNetworkConvertsOnlyAtItsEnds) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 3, 16, 16}).Output("y", DataType::kFloat, {-1, 5});
  Conv(m, "x", "c1", 3, 12, 3, 1, 1, 2);
  m.Node("Relu", {"c1"}, {"r1"});
  auto& pool = m.Node("MaxPool", {"r1"}, {"p1"});
  *pool.add_attribute() = IntsAttr("kernel_shape", {3, 3});
  *pool.add_attribute() = IntsAttr("strides", {2, 2});
  *pool.add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  Conv(m, "p1", "c2", 12, 12, 3, 3);
  m.Node("Relu", {"c2"}, {"r2"});
  Conv(m, "r2", "c3", 12, 12, 3, 5);
  m.Node("Add", {"c3", "p1"}, {"s"});
  m.Node("Relu", {"s"}, {"r3"});
  m.Node("GlobalAveragePool", {"r3"}, {"g"});
  m.Node("Flatten", {"g"}, {"f"});
  m.Initializer("fc_w", RandomFloatTensor({5, 12}, 7));
  m.Initializer("fc_b", RandomFloatTensor({5}, 8));
  auto& gemm = m.Node("Gemm", {"f", "fc_w", "fc_b"}, {"y"});
  *gemm.add_attribute() = IntAttr("transB", 1);
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3, 16, 16}, 9))}});
  EXPECT_EQ(Count(c.after, "NchwToNhwcConv"), 1);  // the MaxPool runs inside it
  EXPECT_EQ(Count(c.after, "NhwcConv"), 2);
  EXPECT_EQ(Count(c.after, "NhwcMaxPool"), 0);
  EXPECT_EQ(Count(c.after, "NhwcGlobalAveragePool"), 1);
  EXPECT_EQ(Count(c.after, "Transpose"), 1);
  EXPECT_EQ(Count(c.after, "Relu") + Count(c.after, "Add") + Count(c.after, "MaxPool"), 0);
}

// A residual sum fused into the convolution (its Z input): r1 dies at the
// first sum, so from the second run on that output takes over r1's buffer;
// the second sum adds the convolution's own input s, which therefore cannot
// lend its buffer and is copied into the output. Every run equals the
// unoptimised graph.
TEST(NhwcLayoutTest, ResidualSumIsRightWhetherZLendsItsBufferOrIsCopied) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 6, 12, 12}).Output("y", DataType::kFloat, {-1, 8, 12, 12});
  Conv(m, "x", "c1", 6, 8, 3, 11);
  m.Node("Relu", {"c1"}, {"r1"});
  Conv(m, "r1", "c2", 8, 8, 3, 13);
  m.Node("Relu", {"c2"}, {"r2"});
  Conv(m, "r2", "c3", 8, 8, 3, 15);
  m.Node("Add", {"c3", "r1"}, {"s"});
  Conv(m, "s", "c4", 8, 8, 1, 17);
  m.Node("Add", {"c4", "s"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 6, 12, 12}, 19))}}, OptimizationLevel::kAll, 3);
  EXPECT_EQ(Count(c.after, "NhwcConv"), 4);
  EXPECT_EQ(Count(c.after, "Add") + Count(c.after, "Relu"), 0);
}

// A bottleneck's expansion to 128 channels adding its projected shortcut,
// then no activation, Relu or Clip: images large enough for the chunked
// pointwise kernel (a tail chunk with 65 x 67 pixels) and one small enough
// for the sum post-op; the shortcut also a graph output (Z cannot lend Y
// its buffer) or not. Every run equals the unoptimised graph.
TEST(NhwcLayoutTest, WideBottleneckExpansionAddsItsResidual) {
  for (const std::string activation : {"", "Relu", "Clip"}) {
    for (bool shortcut_out : {false, true}) {
      for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 32, 48, 48}, {1, 32, 65, 67}, {2, 32, 8, 8}}) {
        SCOPED_TRACE(::testing::Message() << "'" << activation << "'" << (shortcut_out ? ", shortcut read twice" : "")
                                          << ", " << dims[0] << " images of " << dims[2] << " x " << dims[3]);
        const int64_t n = dims[0], h = dims[2], w = dims[3];
        ModelBuilder m(13);
        m.Input("x", DataType::kFloat, dims).Output("y", DataType::kFloat, {n, 40, h, w});
        if (shortcut_out) m.Output("d", DataType::kFloat, {n, 128, h, w});
        // 48 channels inside: oneDNN's primitives throughout but for the
        // expansion (summation orders differ between kernels, and four
        // layers of uniform random weights amplify the difference).
        Conv(m, "x", "c1", 32, 48, 1, 21);
        m.Node("Relu", {"c1"}, {"r1"});
        Conv(m, "r1", "c2", 48, 48, 3, 23);
        m.Node("Relu", {"c2"}, {"r2"});
        Conv(m, "r2", "c3", 48, 128, 1, 25);
        Conv(m, "x", "d", 32, 128, 1, 27);
        m.Node("Add", {"c3", "d"}, {activation.empty() ? "a" : "s"});
        if (activation == "Relu") m.Node("Relu", {"s"}, {"a"});
        if (activation == "Clip") {
          m.Initializer("lo", FloatTensor({}, {-0.5f})).Initializer("hi", FloatTensor({}, {2.f}));
          m.Node("Clip", {"s", "lo", "hi"}, {"a"});
        }
        Conv(m, "a", "y", 128, 40, 1, 31);
        auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor(dims, 29))}}, OptimizationLevel::kAll, 2);
        EXPECT_EQ(Count(c.after, "NhwcConv"), 5);
        EXPECT_EQ(Count(c.after, "Add") + Count(c.after, "Relu") + Count(c.after, "Clip"), 0);
      }
    }
  }
}

// MobileNet's inverted residual: expansion with ReLU6, depthwise, a
// projection to 24 channels adding the block's input (a partial vector of
// output channels), a squeeze-excite gate of 24 -> 6 (SiLU) -> 24
// (Sigmoid) channels on one pixel, and a closing projection read by the
// graph output; odd image sizes. The projections and the gate's
// convolutions run NarrowPointwise; every run equals the unoptimised graph.
TEST(NhwcLayoutTest, InvertedResidualWithNarrowProjections) {
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 24, 14, 14}, {1, 24, 9, 23}}) {
    const int64_t n = dims[0], h = dims[2], w = dims[3];
    ModelBuilder m(13);
    m.Input("x", DataType::kFloat, dims).Output("y", DataType::kFloat, {n, 16, h, w});
    m.Initializer("zero", FloatTensor({}, {0.f})).Initializer("six", FloatTensor({}, {6.f}));
    Conv(m, "x", "e", 24, 144, 1, 41);
    m.Node("Clip", {"e", "zero", "six"}, {"er"});
    Conv(m, "er", "dw", 144, 144, 3, 43, 144);
    m.Node("Clip", {"dw", "zero", "six"}, {"dwr"});
    Conv(m, "dwr", "p", 144, 24, 1, 45);
    m.Node("Add", {"p", "x"}, {"s"});
    m.Node("GlobalAveragePool", {"s"}, {"g"});
    Conv(m, "g", "f1", 24, 6, 1, 47);
    m.Node("Sigmoid", {"f1"}, {"f1s"});  // SiLU, EfficientNet's
    m.Node("Mul", {"f1", "f1s"}, {"f1r"});
    Conv(m, "f1r", "f2", 6, 24, 1, 49);
    m.Node("Sigmoid", {"f2"}, {"gate"});
    m.Node("Mul", {"s", "gate"}, {"t"});
    Conv(m, "t", "y", 24, 16, 1, 51);
    auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor(dims, 53))}}, OptimizationLevel::kAll, 2);
    EXPECT_EQ(Count(c.after, "NhwcConv"), 6) << dims[2];
    EXPECT_EQ(Count(c.after, "Add") + Count(c.after, "Clip") + Count(c.after, "Sigmoid"), 0) << dims[2];
  }
}

// Pre-activation dense block: Concat on channels, BatchNorm and Relu become
// a depthwise convolution with the Relu as its post-op, then a transition
// with average pooling. The output leaves the layout once.
TEST(NhwcLayoutTest, DenseBlockKeepsConcatAndBatchNormChannelsLast) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 4, 12, 10}).Output("y", DataType::kFloat, {1, 6, 6, 5});
  Conv(m, "x", "c1", 4, 5, 3, 11);
  Conv(m, "c1", "c2", 5, 7, 3, 13);
  m.Node("Concat", {"c1", "c2", "x"}, {"cat"}).add_attribute()->CopyFrom(IntAttr("axis", 1));
  m.Initializer("bn_s", RandomFloatTensor({16}, 15));
  m.Initializer("bn_b", RandomFloatTensor({16}, 16));
  m.Initializer("bn_m", RandomFloatTensor({16}, 17));
  m.Initializer("bn_v", FloatTensor({16}, {0.5f, 1.f, 2.f, 0.25f, 1.5f, 0.75f, 3.f, 1.f, 0.6f, 0.9f, 1.1f, 1.3f, 0.4f,
                                           2.5f, 0.8f, 1.7f}));
  auto& bn = m.Node("BatchNormalization", {"cat", "bn_s", "bn_b", "bn_m", "bn_v"}, {"bn"});
  *bn.add_attribute() = FloatAttr("epsilon", 1e-3f);
  m.Node("Relu", {"bn"}, {"r"});
  Conv(m, "r", "c3", 16, 6, 1, 19);
  auto& pool = m.Node("AveragePool", {"c3"}, {"y"});
  *pool.add_attribute() = IntsAttr("kernel_shape", {2, 2});
  *pool.add_attribute() = IntsAttr("strides", {2, 2});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 4, 12, 10}, 20))}});
  // Three convolutions (the first reads x channels first; the Concat still
  // takes x channels-last); the Concat and the BatchNorm (a depthwise
  // NhwcConv with the Relu) then fold into one ConcatScaleShift.
  EXPECT_EQ(Count(c.after, "NchwToNhwcConv"), 1);
  EXPECT_EQ(Count(c.after, "NhwcConv"), 2);
  EXPECT_EQ(Count(c.after, "ConcatScaleShift"), 1);
  EXPECT_EQ(Count(c.after, "Concat"), 0);
  EXPECT_EQ(Count(c.after, "NhwcAveragePool"), 1);
  EXPECT_EQ(Count(c.after, "BatchNormalization") + Count(c.after, "Relu"), 0);
  EXPECT_EQ(Count(c.after, "Transpose"), 2);
}

// An image network's first convolution (few input channels) reads the image
// channels first and writes channels last, no Transpose in front, with the
// activation after it as its own: in registers (Relu, LeakyRelu, HardSwish)
// or over its rows after them (Sigmoid; Tanh and Swish with beta 1.5 as a
// com.microsoft FusedConv writes them). A grouped or dilated one, or one
// with many taps, keeps the Transpose and NhwcConv.
TEST(NhwcLayoutTest, StemConvolutionReadsTheImageChannelsFirst) {
  for (const char* activation : {"Relu", "LeakyRelu", "HardSwish", "Sigmoid", "Tanh", "Swish"}) {
    SCOPED_TRACE(activation);
    const bool fused = std::string(activation) == "Tanh" || std::string(activation) == "Swish";
    ModelBuilder m(14);
    m.Opset("com.microsoft", 1);
    m.Input("x", DataType::kFloat, {-1, 3, 17, 15}).Output("y", DataType::kFloat, {-1, 16, 5, 4});
    auto& conv = Conv(m, "x", "c1", 3, 16, 7, 61, 1, 2);
    if (fused) {
      conv.set_op_type("FusedConv");
      conv.set_domain("com.microsoft");
      conv.set_output(0, "a1");
      *conv.add_attribute() = StringAttr("activation", activation);
      if (std::string(activation) == "Swish") *conv.add_attribute() = FloatsAttr("activation_params", {1.5f});
    } else {
      m.Node(activation, {"c1"}, {"a1"});
    }
    auto& pool = m.Node("MaxPool", {"a1"}, {"y"});
    *pool.add_attribute() = IntsAttr("kernel_shape", {3, 3});
    *pool.add_attribute() = IntsAttr("strides", {2, 2});
    *pool.add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
    auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3, 17, 15}, 65))}});
    EXPECT_EQ(Count(c.after, "NchwToNhwcConv"), 1);  // with the MaxPool inside
    EXPECT_EQ(Count(c.after, "NhwcConv") + Count(c.after, "FusedConv"), 0);
    EXPECT_EQ(Count(c.after, "NhwcMaxPool") + Count(c.after, "MaxPool"), 0);
    EXPECT_EQ(Count(c.after, activation), 0);
    EXPECT_EQ(Count(c.after, "Transpose"), 1);  // y leaving the layout
  }
  {
    // The stem's output also read elsewhere: the MaxPool stays a node.
    ModelBuilder m(14);
    m.Input("x", DataType::kFloat, {1, 3, 16, 16}).Output("y", DataType::kFloat, {1, 8, 8, 8});
    m.Output("z", DataType::kFloat, {1, 8, 8, 8});
    Conv(m, "x", "c1", 3, 8, 3, 75, 1, 2);
    auto& pool = m.Node("MaxPool", {"c1"}, {"y"});
    *pool.add_attribute() = IntsAttr("kernel_shape", {3, 3});
    *pool.add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
    m.Node("Relu", {"c1"}, {"z"});
    auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 3, 16, 16}, 77))}});
    EXPECT_EQ(Count(c.after, "NchwToNhwcConv"), 1);
    EXPECT_EQ(Count(c.after, "NhwcMaxPool"), 1);
  }
  ModelBuilder m(14);
  m.Input("x", DataType::kFloat, {1, 4, 20, 20}).Output("g", DataType::kFloat, {1, 4, 20, 20});
  m.Output("d", DataType::kFloat, {1, 8, 16, 16}).Output("p", DataType::kFloat, {1, 8, 2, 2});
  Conv(m, "x", "g", 4, 4, 3, 67, 2);                                                        // grouped
  Conv(m, "x", "d", 4, 8, 3, 69).add_attribute()->CopyFrom(IntsAttr("dilations", {3, 3}));  // pads 1, 20 -> 16
  m.Initializer("p_w", RandomFloatTensor({8, 4, 9, 9}, 71));                                // 324 taps
  auto& patches = m.Node("Conv", {"x", "p_w"}, {"p"});
  *patches.add_attribute() = IntsAttr("strides", {9, 9});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 4, 20, 20}, 73))}});
  EXPECT_EQ(Count(c.after, "NchwToNhwcConv"), 0);
  EXPECT_EQ(Count(c.after, "NhwcConv"), 3);
}

// A convolution read by a pooling node (converted first) and by a Relu: the
// Relu cannot become the convolution's post-op, since the pool reads the
// value before it.
TEST(NhwcLayoutTest, ActivationStaysANodeWhenAConvertedNodeAlsoReadsTheConvolution) {
  ModelBuilder m(14);
  m.Input("x", DataType::kFloat, {1, 6, 10, 10}).Output("y", DataType::kFloat, {1, 8, 5, 5});
  m.Output("z", DataType::kFloat, {1, 8, 10, 10});
  Conv(m, "x", "c1", 6, 8, 3, 81);
  auto& pool = m.Node("MaxPool", {"c1"}, {"y"});
  *pool.add_attribute() = IntsAttr("kernel_shape", {2, 2});
  *pool.add_attribute() = IntsAttr("strides", {2, 2});
  m.Node("Relu", {"c1"}, {"z"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 6, 10, 10}, 83))}});
  EXPECT_EQ(Count(c.after, "NhwcConv"), 1);
  EXPECT_EQ(Count(c.after, "NhwcMaxPool"), 1);
  EXPECT_EQ(Count(c.after, "Relu"), 1);
}

// Squeeze-excite: the gate [N, C, 1, 1] multiplies the feature map by
// broadcasting, and a per-channel constant [C, 1, 1] is added after it.
TEST(NhwcLayoutTest, SqueezeExciteBroadcastsChannelsLast) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 8, 9, 9}).Output("y", DataType::kFloat, {1, 8, 9, 9});
  Conv(m, "x", "dw", 8, 8, 3, 21, 8);
  m.Node("GlobalAveragePool", {"dw"}, {"g"});
  Conv(m, "g", "sq", 8, 4, 1, 23);
  m.Node("Relu", {"sq"}, {"sqr"});
  Conv(m, "sqr", "ex", 4, 8, 1, 25);
  m.Node("HardSigmoid", {"ex"}, {"gate"});
  m.Node("Mul", {"dw", "gate"}, {"scaled"});
  m.Initializer("shift", RandomFloatTensor({8, 1, 1}, 27));
  m.Node("Add", {"scaled", "shift"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 8, 9, 9}, 28))}});
  EXPECT_EQ(Count(c.after, "NhwcConv"), 3);
  EXPECT_EQ(Count(c.after, "Mul"), 1);
  EXPECT_EQ(Count(c.after, "Add"), 1);
  EXPECT_EQ(Count(c.after, "Transpose"), 2);
}

// Upsampling between convolutions, by scales (nearest) and by sizes (linear).
TEST(NhwcLayoutTest, ResizeRunsOnPermutedScalesAndSizes) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 3, 5, 6}).Output("y", DataType::kFloat, {1, 4, 20, 18});
  Conv(m, "x", "c1", 3, 4, 3, 31);
  m.Initializer("scales", FloatTensor({4}, {1.f, 1.f, 2.f, 2.f}));
  m.Node("Resize", {"c1", "", "scales"}, {"up"}).add_attribute()->CopyFrom(StringAttr("mode", "nearest"));
  Conv(m, "up", "c2", 4, 4, 3, 33);
  m.Initializer("sizes", Int64Tensor({4}, {1, 4, 20, 18}));
  auto& resize = m.Node("Resize", {"c2", "", "", "sizes"}, {"y"});
  *resize.add_attribute() = StringAttr("mode", "linear");
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 3, 5, 6}, 34))}});
  EXPECT_EQ(Count(c.after, "Resize"), 2);
  EXPECT_EQ(Count(c.after, "Transpose"), 1);  // out; the stem reads x channels first
}

// Resize-18: an antialiased downscale filters each axis on its own, so it
// runs on the permuted scales; one with `axes` names NCHW axes and stays.
TEST(NhwcLayoutTest, AntialiasedResizeRunsChannelsLastAndAxesResizeStays) {
  ModelBuilder m(18);
  m.Input("x", DataType::kFloat, {1, 3, 12, 11}).Output("y", DataType::kFloat, {1, 4, 6, 10});
  Conv(m, "x", "c1", 3, 4, 3, 41);
  m.Initializer("scales", FloatTensor({4}, {1.f, 1.f, 0.5f, 0.45f}));
  auto& down = m.Node("Resize", {"c1", "", "scales"}, {"down"});
  *down.add_attribute() = StringAttr("mode", "cubic");
  *down.add_attribute() = IntAttr("antialias", 1);
  Conv(m, "down", "c2", 4, 4, 3, 43);
  m.Initializer("sizes", Int64Tensor({1}, {10}));
  auto& wide = m.Node("Resize", {"c2", "", "", "sizes"}, {"y"});
  *wide.add_attribute() = StringAttr("mode", "linear");
  *wide.add_attribute() = IntsAttr("axes", {3});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 3, 12, 11}, 44))}});
  EXPECT_EQ(Count(c.after, "NchwToNhwcConv") + Count(c.after, "NhwcConv"), 2);
  EXPECT_EQ(Count(c.after, "Resize"), 2);
  EXPECT_EQ(Count(c.after, "Transpose"), 1);  // out before the axes Resize
}

// Learned upsampling between convolutions: stride-2 2x2 and grouped 3x3
// with pads ConvTranspose run channels-last; one with output_padding stays.
TEST(NhwcLayoutTest, ConvTransposeRunsChannelsLast) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 6, 5, 7}).Output("y", DataType::kFloat, {1, 4, 20, 28});
  m.Output("z", DataType::kFloat, {1, 3, 11, 16});
  Conv(m, "x", "c1", 6, 6, 3, 81);
  m.Initializer("up_w", RandomFloatTensor({6, 5, 2, 2}, 82));
  m.Initializer("up_b", RandomFloatTensor({5}, 83));
  auto& up = m.Node("ConvTranspose", {"c1", "up_w", "up_b"}, {"u1"});
  *up.add_attribute() = IntsAttr("kernel_shape", {2, 2});
  *up.add_attribute() = IntsAttr("strides", {2, 2});
  m.Initializer("g_w", RandomFloatTensor({5, 2, 3, 3}, 84));  // group 5: [C, M/group, kH, kW]
  auto& grouped = m.Node("ConvTranspose", {"u1", "g_w"}, {"u2"});
  *grouped.add_attribute() = IntsAttr("strides", {2, 2});
  *grouped.add_attribute() = IntsAttr("pads", {1, 1, 0, 0});
  *grouped.add_attribute() = IntAttr("group", 5);
  Conv(m, "u2", "y", 10, 4, 3, 85);
  m.Initializer("p_w", RandomFloatTensor({6, 3, 3, 3}, 86));
  auto& padded = m.Node("ConvTranspose", {"c1", "p_w"}, {"z"});
  *padded.add_attribute() = IntsAttr("strides", {2, 2});
  *padded.add_attribute() = IntsAttr("output_padding", {0, 1});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 6, 5, 7}, 87))}});
  EXPECT_EQ(Count(c.after, "NhwcConvTranspose"), 2);
  EXPECT_EQ(Count(c.after, "ConvTranspose"), 1);
}

// A model that goes channels-last itself around a block (ConvNeXt writes
// Transpose 0,2,3,1 ... Transpose 0,3,1,2): its transposes are absorbed.
TEST(NhwcLayoutTest, AbsorbsTheModelsOwnLayoutTransposes) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 6, 7, 7}).Output("y", DataType::kFloat, {1, 6, 7, 7});
  Conv(m, "x", "stem", 6, 6, 3, 41);
  Conv(m, "stem", "dw", 6, 6, 7, 43, 6);
  m.Node("Transpose", {"dw"}, {"t_in"}).add_attribute()->CopyFrom(IntsAttr("perm", {0, 2, 3, 1}));
  m.Initializer("gamma", RandomFloatTensor({6}, 45));
  m.Node("Mul", {"t_in", "gamma"}, {"scaled"});
  m.Node("Transpose", {"scaled"}, {"t_out"}).add_attribute()->CopyFrom(IntsAttr("perm", {0, 3, 1, 2}));
  m.Node("Add", {"t_out", "stem"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 6, 7, 7}, 46))}});
  EXPECT_EQ(Count(c.before, "Transpose"), 2);
  EXPECT_EQ(Count(c.after, "Transpose"), 2);  // the input and the output
  EXPECT_EQ(Count(c.after, "NhwcConv"), 2);
}

// Nodes the layout leaves alone get NCHW operands back: MaxPool with
// Indices, Concat on a spatial axis, AveragePool with ceil_mode counting pads.
// An intermediate that is also a graph output keeps its NCHW value.
TEST(NhwcLayoutTest, LeavesTheLayoutWhereANodeNeedsNchw) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 3, 9, 9});
  m.Output("c1", DataType::kFloat, {1, 5, 9, 9}).Output("idx", DataType::kInt64, {1, 5, 5, 5});
  m.Output("cat", DataType::kFloat, {1, 5, 18, 9}).Output("avg", DataType::kFloat, {1, 5, 5, 5});
  Conv(m, "x", "c1", 3, 5, 3, 51);
  Conv(m, "c1", "c2", 5, 5, 3, 53);
  auto& pool = m.Node("MaxPool", {"c2"}, {"mp", "idx"});
  *pool.add_attribute() = IntsAttr("kernel_shape", {2, 2});
  *pool.add_attribute() = IntsAttr("strides", {2, 2});
  *pool.add_attribute() = IntAttr("ceil_mode", 1);
  m.Node("Concat", {"c1", "c2"}, {"cat"}).add_attribute()->CopyFrom(IntAttr("axis", 2));
  auto& avg = m.Node("AveragePool", {"c2"}, {"avg"});
  *avg.add_attribute() = IntsAttr("kernel_shape", {3, 3});
  *avg.add_attribute() = IntsAttr("strides", {2, 2});
  *avg.add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  *avg.add_attribute() = IntAttr("ceil_mode", 1);
  *avg.add_attribute() = IntAttr("count_include_pad", 1);
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 3, 9, 9}, 54))}});
  EXPECT_EQ(Count(c.after, "NchwToNhwcConv"), 1);
  EXPECT_EQ(Count(c.after, "NhwcConv"), 1);
  EXPECT_EQ(Count(c.after, "MaxPool"), 1);
  EXPECT_EQ(Count(c.after, "AveragePool"), 1);
  EXPECT_EQ(Count(c.after, "Transpose"), 2);  // c1 and c2 out
}

// AveragePool-19's dilations are not run channels-last (nor are MaxPool's).
TEST(NhwcLayoutTest, LeavesDilatedAveragePoolNchw) {
  ModelBuilder m(19);
  m.Input("x", DataType::kFloat, {1, 3, 9, 9}).Output("y", DataType::kFloat, {1, 5, 7, 7});
  Conv(m, "x", "c1", 3, 5, 3, 55);
  auto& avg = m.Node("AveragePool", {"c1"}, {"y"});
  *avg.add_attribute() = IntsAttr("kernel_shape", {2, 2});
  *avg.add_attribute() = IntsAttr("dilations", {2, 2});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 3, 9, 9}, 56))}});
  EXPECT_EQ(Count(c.after, "NchwToNhwcConv"), 1);
  EXPECT_EQ(Count(c.after, "AveragePool"), 1);
  EXPECT_EQ(Count(c.after, "NhwcAveragePool"), 0);
}

// Pooling geometries against the reference loops: padding, strides, ceil
// mode for max, averages with and without the pads counted, a window as
// large as the input, and pads as wide as the window; each after a
// convolution (NhwcMaxPool / NhwcAveragePool) and right after the stem,
// where a MaxPool runs inside NchwToNhwcConv (its pool_* attributes).
TEST(NhwcLayoutTest, PoolingGeometriesMatchTheReference) {
  struct Pool {
    const char* op;
    std::vector<int64_t> kernel, strides, pads;
    int64_t ceil_mode, count_include_pad;
  };
  const Pool pools[] = {
      {"MaxPool", {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, 0},     {"MaxPool", {2, 3}, {2, 1}, {0, 1, 1, 0}, 1, 0},
      {"AveragePool", {3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 1}, {"AveragePool", {3, 2}, {2, 2}, {1, 0, 1, 1}, 0, 0},
      {"AveragePool", {3, 3}, {2, 2}, {0, 0, 0, 0}, 1, 0}, {"MaxPool", {11, 10}, {1, 1}, {0, 0, 0, 0}, 0, 0},
      {"MaxPool", {2, 2}, {1, 1}, {2, 2, 2, 2}, 0, 0},     {"AveragePool", {2, 2}, {3, 3}, {2, 1, 2, 1}, 0, 0},
  };
  for (bool after_stem : {false, true}) {
    for (const Pool& p : pools) {
      SCOPED_TRACE(::testing::Message() << p.op << " kernel " << p.kernel[0] << "x" << p.kernel[1] << " pads "
                                        << p.pads[0] << p.pads[1] << p.pads[2] << p.pads[3] << " ceil " << p.ceil_mode
                                        << (after_stem ? " after the stem" : ""));
      ModelBuilder m(13);
      m.Input("x", DataType::kFloat, {2, 3, 11, 10}).Output("y", DataType::kFloat, {-1, -1, -1, -1});
      Conv(m, "x", "c", 3, 19, 3, 61);
      if (!after_stem) Conv(m, "c", "c2", 19, 19, 1, 63);
      auto& pool = m.Node(p.op, {after_stem ? "c" : "c2"}, {"y"});
      *pool.add_attribute() = IntsAttr("kernel_shape", p.kernel);
      *pool.add_attribute() = IntsAttr("strides", p.strides);
      *pool.add_attribute() = IntsAttr("pads", p.pads);
      *pool.add_attribute() = IntAttr("ceil_mode", p.ceil_mode);
      if (std::string(p.op) == "AveragePool") {
        *pool.add_attribute() = IntAttr("count_include_pad", p.count_include_pad);
      }
      auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3, 11, 10}, 62))}});
      const bool inside_stem = after_stem && std::string(p.op) == "MaxPool";
      EXPECT_EQ(Count(c.after, std::string("Nhwc") + p.op), inside_stem ? 0 : 1);
      EXPECT_EQ(Count(c.after, p.op), 0);
      EXPECT_EQ(Count(c.after, "NchwToNhwcConv"), 1);
    }
  }
}

TEST(NhwcLayoutTest, GlobalMaxPoolAndOtherLevelsKeepNchw) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 70, 6, 5}).Output("y", DataType::kFloat, {1, 70, 1, 1});
  Conv(m, "x", "c", 70, 70, 3, 71, 70);
  m.Node("GlobalMaxPool", {"c"}, {"y"});
  auto all = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 70, 6, 5}, 72))}});
  EXPECT_EQ(Count(all.after, "NhwcGlobalMaxPool"), 1);
  auto extended = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 70, 6, 5}, 72))}}, OptimizationLevel::kExtended);
  EXPECT_EQ(Count(extended.after, "NhwcConv") + Count(extended.after, "Transpose"), 0);
}

// ShuffleNetV2's unit: two branches concatenated on channels, the channel
// shuffle (Reshape -> Transpose -> Reshape), then the split into the next
// unit's branches. The shuffle runs channels-last as one NhwcChannelShuffle:
// the graph leaves the layout only at its end. Groups 2 (the interleave path)
// and 3 (the general one).
TEST(NhwcLayoutTest, ChannelShuffleStaysChannelsLast) {
  for (int64_t groups : {2, 3}) {
    const int64_t c = 4 * groups;
    ModelBuilder m(13);
    m.Input("x", DataType::kFloat, {1, c, 6, 5}).Output("y", DataType::kFloat, {1, c / 2 * 2, 6, 5});
    Conv(m, "x", "a", c, c / 2, 1, 81);
    Conv(m, "x", "b", c, c - c / 2, 3, 83);
    m.Node("Concat", {"a", "b"}, {"cat"}).add_attribute()->CopyFrom(IntAttr("axis", 1));
    m.Initializer("grouped_shape", Int64Tensor({5}, {1, groups, c / groups, 6, 5}));
    m.Initializer("flat_shape", Int64Tensor({4}, {1, c, 6, 5}));
    m.Node("Reshape", {"cat", "grouped_shape"}, {"grouped"});
    m.Node("Transpose", {"grouped"}, {"swapped"}).add_attribute()->CopyFrom(IntsAttr("perm", {0, 2, 1, 3, 4}));
    m.Node("Reshape", {"swapped", "flat_shape"}, {"shuffled"});
    m.Initializer("split", Int64Tensor({2}, {c / 2, c - c / 2}));
    m.Node("Split", {"shuffled", "split"}, {"left", "right"}).add_attribute()->CopyFrom(IntAttr("axis", 1));
    Conv(m, "right", "r", c - c / 2, c / 2, 3, 85);
    m.Node("Concat", {"left", "r"}, {"y"}).add_attribute()->CopyFrom(IntAttr("axis", 1));
    auto result = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, c, 6, 5}, 87))}});
    EXPECT_EQ(Count(result.after, "NhwcChannelShuffle"), 1) << "groups " << groups;
    EXPECT_EQ(Count(result.after, "Reshape"), 0) << "groups " << groups;
    EXPECT_EQ(Count(result.after, "Transpose"), 2) << "groups " << groups;  // in and out, once each
  }
}

}  // namespace
}  // namespace onyx
