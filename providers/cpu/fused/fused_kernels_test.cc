// The com.onyx fused kernels against the unfused composition of standard ops
// they replace (engine/optimizer/README.md), on seeded random shapes,
// attributes and data. Both sessions run with the optimizer disabled, so the
// fused node runs as written and the composition is not fused back.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatAttr;
using testing::FloatsAttr;
using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;
using testing::StringAttr;

constexpr char kDomain[] = "com.onyx";
constexpr int kTrials = 8;

// A model of one float output "y" of unknown dims, at opset 13 plus com.onyx 1.
ModelBuilder NewModel(int64_t rank) {
  ModelBuilder m(13);
  m.Opset(kDomain, 1);
  m.Output("y", DataType::kFloat, std::vector<int64_t>(rank, -1));
  return m;
}

absl::StatusOr<Tensor> RunUnoptimized(const ModelBuilder& m, const Feeds& feeds) {
  SessionOptions options;
  options.model_name = "fused_kernels_test";
  options.optimization_level = OptimizationLevel::kDisabled;
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  if (!session.ok()) return session.status();
  auto out = (*session)->Run(RunOptions(), feeds, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0].tensor();
}

// Runs both models on the same feeds; their outputs must agree elementwise.
void ExpectSameOutput(const ModelBuilder& fused, const ModelBuilder& unfused, const Feeds& feeds,
                      const std::string& what, double tolerance = 1e-4) {
  auto got = RunUnoptimized(fused, feeds);
  auto want = RunUnoptimized(unfused, feeds);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  ASSERT_TRUE(want.ok()) << what << ": " << want.status();
  ASSERT_EQ(got->dims(), want->dims()) << what;
  ASSERT_GT(want->num_elements(), 0) << what;
  for (int64_t i = 0; i < want->num_elements(); ++i) {
    const float w = want->data<float>()[i];
    ASSERT_NEAR(got->data<float>()[i], w, tolerance * (1 + std::abs(w))) << what << ", element " << i;
  }
}

int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

float PickFloat(std::mt19937& rng, float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }

// Appends the unfused form of a FusedConv activation from `in` to "y".
void AppendActivation(ModelBuilder& m, const std::string& name, const std::vector<float>& p, const std::string& in) {
  if (name.empty()) {
    m.Node("Identity", {in}, {"y"});
  } else if (name == "Relu" || name == "Sigmoid") {
    m.Node(name, {in}, {"y"});
  } else if (name == "LeakyRelu") {
    *m.Node("LeakyRelu", {in}, {"y"}).add_attribute() = FloatAttr("alpha", p[0]);
  } else if (name == "Clip") {
    m.Initializer("lo", FloatTensor({}, {p[0]})).Initializer("hi", FloatTensor({}, {p[1]}));
    m.Node("Clip", {in, "lo", "hi"}, {"y"});
  } else if (name == "HardSigmoid") {
    auto& n = m.Node("HardSigmoid", {in}, {"y"});
    *n.add_attribute() = FloatAttr("alpha", p[0]);
    *n.add_attribute() = FloatAttr("beta", p[1]);
  } else if (name == "Swish") {  // x * sigmoid(beta * x)
    m.Initializer("beta", FloatTensor({}, {p[0]}));
    m.Node("Mul", {in, "beta"}, {"scaled"});
    m.Node("Sigmoid", {"scaled"}, {"gate"});
    m.Node("Mul", {in, "gate"}, {"y"});
  }
}

TEST(FusedKernelsTest, FusedConvMatchesConvAddActivation) {
  const std::vector<std::pair<std::string, std::vector<float>>> activations = {
      {"", {}},
      {"Relu", {}},
      {"LeakyRelu", {0.2f}},
      {"Clip", {-0.3f, 0.6f}},
      {"Sigmoid", {}},
      {"HardSigmoid", {0.3f, 0.4f}},
      {"Swish", {1.5f}},
  };
  std::mt19937 rng(17);
  for (int trial = 0; trial < 2 * static_cast<int>(activations.size()); ++trial) {
    const auto& [activation, params] = activations[trial % activations.size()];
    const bool constant_weights = trial < static_cast<int>(activations.size());  // oneDNN, else the CPU Conv
    const int64_t n = Pick(rng, 1, 2), c = Pick(rng, 1, 4), h = Pick(rng, 3, 9), w = Pick(rng, 3, 9);
    const int64_t m_out = Pick(rng, 1, 5), k = Pick(rng, 0, 1) * 2 + 1, pad = Pick(rng, 0, k / 2),
                  stride = Pick(rng, 1, 2);
    const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
    const bool residual = rng() % 2 == 0;
    const uint32_t seed = 100 * trial;
    const Tensor x = RandomFloatTensor({n, c, h, w}, seed + 1), weights = RandomFloatTensor({m_out, c, k, k}, seed + 2),
                 bias = RandomFloatTensor({m_out}, seed + 3), z = RandomFloatTensor({n, m_out, oh, ow}, seed + 4);
    auto conv_attributes = [&](onnx::NodeProto& node) {
      *node.add_attribute() = IntsAttr("kernel_shape", {k, k});
      *node.add_attribute() = IntsAttr("pads", {pad, pad, pad, pad});
      *node.add_attribute() = IntsAttr("strides", {stride, stride});
    };
    auto inputs = [&](ModelBuilder& model) {
      model.Input("x", DataType::kFloat, {n, c, h, w});
      if (constant_weights) {
        model.Initializer("w", weights);
      } else {
        model.Input("w", DataType::kFloat, {m_out, c, k, k});
      }
      model.Initializer("b", bias);
      if (residual) model.Input("z", DataType::kFloat, {n, m_out, oh, ow});
    };
    ModelBuilder fused = NewModel(4);
    inputs(fused);
    std::vector<std::string> fused_inputs = {"x", "w", "b"};
    if (residual) fused_inputs.push_back("z");
    auto& node = fused.Node("FusedConv", fused_inputs, {"y"});
    node.set_domain(kDomain);
    conv_attributes(node);
    if (!activation.empty()) *node.add_attribute() = StringAttr("activation", activation);
    if (!params.empty()) *node.add_attribute() = FloatsAttr("activation_params", params);

    ModelBuilder unfused = NewModel(4);
    inputs(unfused);
    conv_attributes(unfused.Node("Conv", {"x", "w", "b"}, {"conv"}));
    if (residual) unfused.Node("Add", {"conv", "z"}, {"sum"});
    AppendActivation(unfused, activation, params, residual ? "sum" : "conv");

    Feeds feeds = {{"x", Value(x)}};
    if (!constant_weights) feeds.emplace_back("w", Value(weights));
    if (residual) feeds.emplace_back("z", Value(z));
    ExpectSameOutput(fused, unfused, feeds,
                     "trial " + std::to_string(trial) + " activation '" + activation + "'" +
                         (constant_weights ? " constant W" : " W fed") + (residual ? " + Z" : ""));
  }
}

TEST(FusedKernelsTest, FusedGemmMatchesGemmRelu) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < kTrials; ++trial) {
    const int64_t m = Pick(rng, 1, 9), k = Pick(rng, 1, 17), n = Pick(rng, 1, 13);
    const int64_t trans_a = Pick(rng, 0, 1), trans_b = Pick(rng, 0, 1);
    const float alpha = PickFloat(rng, 0.5f, 2.0f), beta = PickFloat(rng, -1.0f, 1.0f);
    const uint32_t seed = 10 * trial;
    const Tensor a = RandomFloatTensor(trans_a ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, seed + 1);
    const Tensor b = RandomFloatTensor(trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, seed + 2);
    const Tensor c = RandomFloatTensor({n}, seed + 3);
    auto build = [&](bool fuse) {
      ModelBuilder model = NewModel(2);
      model.Input("a", DataType::kFloat, {a.dims().begin(), a.dims().end()}).Initializer("b", b).Initializer("c", c);
      auto& node = model.Node(fuse ? "FusedGemm" : "Gemm", {"a", "b", "c"}, {fuse ? "y" : "g"});
      if (fuse) {
        node.set_domain(kDomain);
        *node.add_attribute() = StringAttr("activation", "Relu");
      }
      *node.add_attribute() = IntAttr("transA", trans_a);
      *node.add_attribute() = IntAttr("transB", trans_b);
      *node.add_attribute() = FloatAttr("alpha", alpha);
      *node.add_attribute() = FloatAttr("beta", beta);
      if (!fuse) model.Node("Relu", {"g"}, {"y"});
      return model;
    };
    ExpectSameOutput(build(true), build(false), {{"a", Value(a)}}, "trial " + std::to_string(trial));
  }
}

TEST(FusedKernelsTest, FusedMatMulMatchesMatMulAddActivation) {
  std::mt19937 rng(29);
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<int64_t> a_dims;
    for (int64_t d = 0, rank = Pick(rng, 2, 4); d < rank - 1; ++d) a_dims.push_back(Pick(rng, 1, 5));
    const int64_t k = Pick(rng, 1, 17), n = Pick(rng, 1, 13);
    a_dims.push_back(k);
    const bool relu = trial % 2 == 0;
    const uint32_t seed = 10 * trial;
    const Tensor a = RandomFloatTensor(a_dims, seed + 1), b = RandomFloatTensor({k, n}, seed + 2),
                 bias = RandomFloatTensor({n}, seed + 3);
    ModelBuilder fused = NewModel(static_cast<int64_t>(a_dims.size()));
    fused.Input("a", DataType::kFloat, a_dims).Initializer("b", b).Initializer("bias", bias);
    auto& node = fused.Node("FusedMatMul", {"a", "b", "bias"}, {"y"});
    node.set_domain(kDomain);
    if (relu) *node.add_attribute() = StringAttr("activation", "Relu");
    ModelBuilder unfused = NewModel(static_cast<int64_t>(a_dims.size()));
    unfused.Input("a", DataType::kFloat, a_dims).Initializer("b", b).Initializer("bias", bias);
    unfused.Node("MatMul", {"a", "b"}, {"p"});
    unfused.Node("Add", {"p", "bias"}, {relu ? "s" : "y"});
    if (relu) unfused.Node("Relu", {"s"}, {"y"});
    ExpectSameOutput(fused, unfused, {{"a", Value(a)}}, "trial " + std::to_string(trial) + (relu ? " relu" : ""));
  }
}

TEST(FusedKernelsTest, GeluMatchesErfComposition) {
  std::mt19937 rng(31);
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<int64_t> dims;
    for (int64_t d = 0, rank = Pick(rng, 1, 4); d < rank; ++d) dims.push_back(Pick(rng, 1, 7));
    Tensor x = RandomFloatTensor(dims, 7 * trial + 1);
    for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_data<float>()[i] *= 4;  // [-4, 4): both tails
    ModelBuilder fused = NewModel(static_cast<int64_t>(dims.size()));
    fused.Input("x", DataType::kFloat, dims);
    fused.Node("Gelu", {"x"}, {"y"}).set_domain(kDomain);
    // 0.5 x (1 + erf(x / sqrt 2))
    ModelBuilder unfused = NewModel(static_cast<int64_t>(dims.size()));
    unfused.Input("x", DataType::kFloat, dims);
    unfused.Initializer("sqrt2", FloatTensor({}, {std::sqrt(2.0f)}));
    unfused.Initializer("one", FloatTensor({}, {1.0f})).Initializer("half", FloatTensor({}, {0.5f}));
    unfused.Node("Div", {"x", "sqrt2"}, {"scaled"});
    unfused.Node("Erf", {"scaled"}, {"erf"});
    unfused.Node("Add", {"erf", "one"}, {"shifted"});
    unfused.Node("Mul", {"x", "shifted"}, {"prod"});
    unfused.Node("Mul", {"prod", "half"}, {"y"});
    ExpectSameOutput(fused, unfused, {{"x", Value(x)}}, "trial " + std::to_string(trial));
  }
}

TEST(FusedKernelsTest, LayerNormalizationMatchesReduceMeanComposition) {
  std::mt19937 rng(37);
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<int64_t> dims;
    for (int64_t d = 0, rank = Pick(rng, 2, 4); d < rank; ++d) dims.push_back(Pick(rng, 1, 6));
    dims.back() = Pick(rng, 2, 33);
    const int64_t width = dims.back();
    const float epsilon = trial % 2 == 0 ? 1e-5f : 1e-2f;
    const uint32_t seed = 10 * trial;
    const Tensor x = RandomFloatTensor(dims, seed + 1), scale = RandomFloatTensor({width}, seed + 2),
                 bias = RandomFloatTensor({width}, seed + 3);
    ModelBuilder fused = NewModel(static_cast<int64_t>(dims.size()));
    fused.Input("x", DataType::kFloat, dims).Initializer("scale", scale).Initializer("bias", bias);
    auto& node = fused.Node("LayerNormalization", {"x", "scale", "bias"}, {"y"});
    node.set_domain(kDomain);
    *node.add_attribute() = FloatAttr("epsilon", epsilon);
    // (x - mean) / sqrt(mean((x - mean)^2) + eps) * scale + bias over the last axis.
    ModelBuilder unfused = NewModel(static_cast<int64_t>(dims.size()));
    unfused.Input("x", DataType::kFloat, dims).Initializer("scale", scale).Initializer("bias", bias);
    unfused.Initializer("eps", FloatTensor({}, {epsilon}));
    *unfused.Node("ReduceMean", {"x"}, {"mean"}).add_attribute() = IntsAttr("axes", {-1});
    unfused.Node("Sub", {"x", "mean"}, {"centered"});
    unfused.Node("Mul", {"centered", "centered"}, {"squared"});
    *unfused.Node("ReduceMean", {"squared"}, {"var"}).add_attribute() = IntsAttr("axes", {-1});
    unfused.Node("Add", {"var", "eps"}, {"var_eps"});
    unfused.Node("Sqrt", {"var_eps"}, {"std"});
    unfused.Node("Div", {"centered", "std"}, {"normalized"});
    unfused.Node("Mul", {"normalized", "scale"}, {"scaled"});
    unfused.Node("Add", {"scaled", "bias"}, {"y"});
    ExpectSameOutput(fused, unfused, {{"x", Value(x)}}, "trial " + std::to_string(trial));
  }
}

// Every permutation of a rank-r tensor's axes, and one at random.
std::vector<int64_t> RandomPerm(std::mt19937& rng, int64_t rank) {
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  return perm;
}

// Dims seen through a permutation: out[i] = dims[perm[i]].
std::vector<int64_t> PermutedDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t p : perm) out.push_back(dims[p]);
  return out;
}

// The inverse permutation: the Transpose that restores the original order.
std::vector<int64_t> Inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

// Random permutations of A, B and the product (those that keep a contiguous
// row or column and those the kernel copies first), batch broadcasting
// between operands of different ranks, and a scale.
TEST(FusedKernelsTest, TransposedMatMulMatchesTransposesAroundMatMul) {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 4 * kTrials; ++trial) {
    const int64_t rank_a = Pick(rng, 2, 4), rank_b = trial % 3 == 0 ? 2 : rank_a;
    const int64_t rank_y = std::max(rank_a, rank_b);
    std::vector<int64_t> batch;
    for (int64_t d = 0; d < rank_y - 2; ++d) batch.push_back(Pick(rng, 1, 3));
    const int64_t m = Pick(rng, 1, 7), k = Pick(rng, 1, 9), n = Pick(rng, 1, 6);
    // The operands as multiplied ([..., M, K] and [..., K, N]); a batch dim
    // of B is 1 now and then (broadcast).
    std::vector<int64_t> a_view(batch.end() - (rank_a - 2), batch.end()), b_view;
    a_view.push_back(m);
    a_view.push_back(k);
    for (int64_t d = rank_y - rank_b; d < rank_y - 2; ++d) b_view.push_back(Pick(rng, 0, 3) == 0 ? 1 : batch[d]);
    b_view.push_back(k);
    b_view.push_back(n);
    const std::vector<int64_t> perm_a = RandomPerm(rng, rank_a), perm_b = RandomPerm(rng, rank_b),
                               perm_y = RandomPerm(rng, rank_y);
    // Stored so that Transpose(stored, perm) is the view.
    const std::vector<int64_t> a_dims = PermutedDims(a_view, Inverse(perm_a)),
                               b_dims = PermutedDims(b_view, Inverse(perm_b));
    const float alpha = trial % 2 == 0 ? 1.f : 0.125f;
    const uint32_t seed = 40 * trial;
    const Tensor a = RandomFloatTensor(a_dims, seed + 1), b = RandomFloatTensor(b_dims, seed + 2);
    ModelBuilder fused = NewModel(rank_y);
    fused.Input("a", DataType::kFloat, a_dims).Input("b", DataType::kFloat, b_dims);
    auto& node = fused.Node("TransposedMatMul", {"a", "b"}, {"y"});
    node.set_domain(kDomain);
    *node.add_attribute() = IntsAttr("perm_a", perm_a);
    *node.add_attribute() = IntsAttr("perm_b", perm_b);
    *node.add_attribute() = IntsAttr("perm_y", perm_y);
    if (alpha != 1.f) *node.add_attribute() = FloatAttr("alpha", alpha);
    ModelBuilder unfused = NewModel(rank_y);
    unfused.Input("a", DataType::kFloat, a_dims).Input("b", DataType::kFloat, b_dims);
    unfused.Initializer("alpha", FloatTensor({}, {alpha}));
    *unfused.Node("Transpose", {"a"}, {"ta"}).add_attribute() = IntsAttr("perm", perm_a);
    *unfused.Node("Transpose", {"b"}, {"tb"}).add_attribute() = IntsAttr("perm", perm_b);
    unfused.Node("MatMul", {"ta", "tb"}, {"p"});
    unfused.Node("Mul", {"p", "alpha"}, {"scaled"});
    *unfused.Node("Transpose", {"scaled"}, {"y"}).add_attribute() = IntsAttr("perm", perm_y);
    ExpectSameOutput(fused, unfused, {{"a", Value(a)}, {"b", Value(b)}}, "trial " + std::to_string(trial));
  }
}

TEST(FusedKernelsTest, TransposedMatMulRefusesAPermOfTheWrongRankNamingIt) {
  ModelBuilder m = NewModel(3);
  m.Input("a", DataType::kFloat, {2, 3, 4}).Input("b", DataType::kFloat, {2, 4, 5});
  auto& node = m.Node("TransposedMatMul", {"a", "b"}, {"y"});
  node.set_domain(kDomain);
  *node.add_attribute() = IntsAttr("perm_b", {1, 0});
  auto out =
      RunUnoptimized(m, {{"a", Value(RandomFloatTensor({2, 3, 4}, 1))}, {"b", Value(RandomFloatTensor({2, 4, 5}, 2))}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("perm_b has 2 entries"), std::string::npos) << out.status();

  ModelBuilder bad = NewModel(3);
  bad.Input("a", DataType::kFloat, {2, 3, 4}).Input("b", DataType::kFloat, {2, 4, 5});
  auto& dup = bad.Node("TransposedMatMul", {"a", "b"}, {"y"});
  dup.set_domain(kDomain);
  *dup.add_attribute() = IntsAttr("perm_a", {0, 0, 1});
  out = RunUnoptimized(bad,
                       {{"a", Value(RandomFloatTensor({2, 3, 4}, 1))}, {"b", Value(RandomFloatTensor({2, 4, 5}, 2))}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("perm_a"), std::string::npos) << out.status();
}

// Masks of every broadcast form: full, a row per batch ([b, 1, 1, s]), one
// value per row ([..., 1], which the softmax ignores unless it is -inf),
// lower rank, with masked (-10000 and -inf) positions.
TEST(FusedKernelsTest, MaskedSoftmaxMatchesAddThenSoftmax) {
  std::mt19937 rng(37);
  for (int trial = 0; trial < 2 * kTrials; ++trial) {
    std::vector<int64_t> x_dims;
    const int64_t rank = Pick(rng, 1, 4);
    for (int64_t d = 0; d < rank; ++d) x_dims.push_back(Pick(rng, 1, d == rank - 1 ? 40 : 4));
    std::vector<int64_t> m_dims(x_dims.begin() + Pick(rng, 0, rank - 1), x_dims.end());
    for (auto& dim : m_dims) {
      if (Pick(rng, 0, 2) == 0) dim = 1;
    }
    const Tensor x = RandomFloatTensor(x_dims, 50 * trial + 1);
    Tensor m = RandomFloatTensor(m_dims, 50 * trial + 2);
    if (m.num_elements() > 1) m.mutable_data<float>()[0] = -10000.f;
    // -inf where its row keeps finite entries (a row of -inf is NaN both ways).
    if (m_dims.back() == x_dims.back() && x_dims.back() > 2 && trial % 3 == 0) m.mutable_data<float>()[1] = -INFINITY;
    ModelBuilder fused = NewModel(rank);
    fused.Input("x", DataType::kFloat, x_dims).Input("m", DataType::kFloat, m_dims);
    fused.Node("MaskedSoftmax", {"x", "m"}, {"y"}).set_domain(kDomain);
    ModelBuilder unfused = NewModel(rank);
    unfused.Input("x", DataType::kFloat, x_dims).Input("m", DataType::kFloat, m_dims);
    unfused.Node("Add", {"x", "m"}, {"s"});
    unfused.Node("Softmax", {"s"}, {"y"});
    ExpectSameOutput(fused, unfused, {{"x", Value(x)}, {"m", Value(m)}}, "trial " + std::to_string(trial), 1e-5);
  }
}

TEST(FusedKernelsTest, MaskedSoftmaxRefusesAMaskThatWidensTheScores) {
  ModelBuilder m = NewModel(2);
  m.Input("x", DataType::kFloat, {2, 3}).Input("m", DataType::kFloat, {4, 1, 3});
  m.Node("MaskedSoftmax", {"x", "m"}, {"y"}).set_domain(kDomain);
  auto out =
      RunUnoptimized(m, {{"x", Value(RandomFloatTensor({2, 3}, 1))}, {"m", Value(RandomFloatTensor({4, 1, 3}, 2))}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("must broadcast to X"), std::string::npos) << out.status();
}

// Random ranks, input counts and widths, with and without Relu, against
// Concat over the last axis, Mul by scale, Add shift (and Relu).
TEST(FusedKernelsTest, ConcatScaleShiftMatchesConcatMulAdd) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 2 * kTrials; ++trial) {
    const int64_t rank = Pick(rng, 1, 4), inputs = Pick(rng, 1, 4);
    const bool relu = trial % 2 == 0;
    std::vector<int64_t> outer;
    for (int64_t d = 0; d + 1 < rank; ++d) outer.push_back(Pick(rng, 1, 5));
    ModelBuilder fused = NewModel(rank), unfused = NewModel(rank);
    Feeds feeds;
    std::vector<std::string> names;
    int64_t channels = 0;
    for (int64_t i = 0; i < inputs; ++i) {
      std::vector<int64_t> dims = outer;
      dims.push_back(Pick(rng, 1, 40));
      channels += dims.back();
      names.push_back("x" + std::to_string(i));
      fused.Input(names.back(), DataType::kFloat, dims);
      unfused.Input(names.back(), DataType::kFloat, dims);
      feeds.emplace_back(names.back(), Value(RandomFloatTensor(dims, 60 * trial + i)));
    }
    const Tensor scale = RandomFloatTensor({channels}, 60 * trial + 10);
    const Tensor shift = RandomFloatTensor({channels}, 60 * trial + 11);
    fused.Initializer("scale", scale).Initializer("shift", shift);
    unfused.Initializer("scale", scale).Initializer("shift", shift);
    std::vector<std::string> fused_inputs = {"scale", "shift"};
    fused_inputs.insert(fused_inputs.end(), names.begin(), names.end());
    auto& node = fused.Node("ConcatScaleShift", fused_inputs, {"y"});
    node.set_domain(kDomain);
    if (relu) *node.add_attribute() = StringAttr("activation", "Relu");
    *unfused.Node("Concat", names, {"c"}).add_attribute() = IntAttr("axis", -1);
    unfused.Node("Mul", {"c", "scale"}, {"m"});
    unfused.Node("Add", {"m", "shift"}, {relu ? "a" : "y"});
    if (relu) unfused.Node("Relu", {"a"}, {"y"});
    ExpectSameOutput(fused, unfused, feeds, "trial " + std::to_string(trial), 1e-6);
  }
}

TEST(FusedKernelsTest, ConcatScaleShiftRefusesAScaleOfTheWrongWidthNamingIt) {
  ModelBuilder m = NewModel(2);
  m.Input("a", DataType::kFloat, {2, 3}).Input("b", DataType::kFloat, {2, 4});
  m.Initializer("scale", RandomFloatTensor({6}, 1)).Initializer("shift", RandomFloatTensor({7}, 2));
  m.Node("ConcatScaleShift", {"scale", "shift", "a", "b"}, {"y"}).set_domain(kDomain);
  auto out =
      RunUnoptimized(m, {{"a", Value(RandomFloatTensor({2, 3}, 3))}, {"b", Value(RandomFloatTensor({2, 4}, 4))}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("scale must hold 7"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("[6]"), std::string::npos) << out.status();
}

TEST(FusedKernelsTest, UnknownActivationIsRefusedNamingIt) {
  ModelBuilder m = NewModel(2);
  m.Input("a", DataType::kFloat, {2, 3}).Initializer("b", RandomFloatTensor({3, 4}, 1));
  m.Initializer("bias", RandomFloatTensor({4}, 2));
  auto& node = m.Node("FusedMatMul", {"a", "b", "bias"}, {"y"});
  node.set_domain(kDomain);
  *node.add_attribute() = StringAttr("activation", "Tanh");
  auto out = RunUnoptimized(m, {{"a", Value(RandomFloatTensor({2, 3}, 3))}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("Tanh"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
