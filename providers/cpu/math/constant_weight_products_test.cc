// Gemm and MatMul whose B is an initializer run oneDNN's matmul with B packed
// once (DnnlMatMul); the forms that do not fit it (alpha != 1, beta != 1, a
// full C, transA) keep the general path. Both are checked against products
// written out here in double, and one initializer read as [K, N] by a MatMul
// and as [N, K] by a Gemm (transB) gets two packings, not one shared.
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx::testing {
namespace {

Tensor Random(const std::vector<int64_t>& dims, std::mt19937& rng) {
  Tensor t = Tensor::Allocate(DataType::kFloat, dims);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

// y[m, n] = alpha * a[m, k] op(b) + beta * c (c broadcast from [n], [1, n] or [m, n]).
std::vector<double> Reference(const Tensor& a, const Tensor& b, bool trans_b, const Tensor* c, float alpha,
                              float beta) {
  const int64_t m = a.dims()[0], k = a.dims()[1], n = trans_b ? b.dims()[0] : b.dims()[1];
  std::vector<double> y(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        sum += double(a.data<float>()[i * k + p]) * b.data<float>()[trans_b ? j * k + p : p * n + j];
      }
      double bias = 0;
      if (c != nullptr) bias = c->num_elements() == m * n ? c->data<float>()[i * n + j] : c->data<float>()[j];
      y[i * n + j] = alpha * sum + beta * bias;
    }
  }
  return y;
}

void ExpectClose(const Value& got, const std::vector<double>& want, const std::string& what) {
  const std::vector<float> y = Values<float>(got);
  ASSERT_EQ(y.size(), want.size()) << what;
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
}

TEST(ConstantWeightProductsTest, GemmMatchesDoubleInEveryForm) {
  std::mt19937 rng(41);
  const int64_t k = 33, n = 17;
  struct Form {
    const char* name;
    bool trans_b;
    std::vector<int64_t> c_dims;  // empty: no C
    float alpha, beta;
  };
  const Form forms[] = {
      {"transB, bias [N]", true, {n}, 1.f, 1.f},
      {"bias [1, N]", false, {1, n}, 1.f, 1.f},
      {"no C", true, {}, 1.f, 1.f},
      {"full C (general path)", true, {5, n}, 1.f, 1.f},
      {"alpha 2 (general path)", true, {n}, 2.f, 1.f},
      {"beta 0.5 (general path)", false, {n}, 1.f, 0.5f},
  };
  for (const Form& f : forms) {
    for (int64_t m : {1, 5}) {
      if (f.c_dims.size() == 2 && f.c_dims[0] != m && f.c_dims[0] != 1) continue;
      const Tensor a = Random({m, k}, rng);
      const Tensor b = Random(f.trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, rng);
      const Tensor c = f.c_dims.empty() ? Tensor() : Random(f.c_dims, rng);
      ModelBuilder model(13);
      model.Input("a", DataType::kFloat, {m, k}).Initializer("b", b).Output("y", DataType::kFloat, {m, n});
      std::vector<std::string> inputs = {"a", "b"};
      if (!f.c_dims.empty()) {
        model.Initializer("c", c);
        inputs.push_back("c");
      }
      auto& node = model.Node("Gemm", inputs, {"y"});
      *node.add_attribute() = IntAttr("transB", f.trans_b);
      *node.add_attribute() = FloatAttr("alpha", f.alpha);
      *node.add_attribute() = FloatAttr("beta", f.beta);
      auto out = RunModel(model, {{"a", Value(a)}}, {"y"});
      ASSERT_TRUE(out.ok()) << f.name << ": " << out.status();
      ExpectClose((*out)[0], Reference(a, b, f.trans_b, f.c_dims.empty() ? nullptr : &c, f.alpha, f.beta),
                  std::string(f.name) + " m=" + std::to_string(m));
    }
  }
}

TEST(ConstantWeightProductsTest, MatMulWithAConstantMatrixMatchesDoubleForEveryRankOfA) {
  std::mt19937 rng(43);
  const int64_t k = 24, n = 19;
  const Tensor b = Random({k, n}, rng);
  for (const std::vector<int64_t>& a_dims : std::vector<std::vector<int64_t>>{{k}, {3, k}, {2, 3, k}}) {
    const Tensor a = Random(a_dims, rng);
    std::vector<int64_t> y_dims(a_dims.begin(), a_dims.end() - 1);
    y_dims.push_back(n);
    ModelBuilder model(13);
    model.Input("a", DataType::kFloat, a_dims).Initializer("b", b).Output("y", DataType::kFloat, y_dims);
    model.Node("MatMul", {"a", "b"}, {"y"});
    auto out = RunModel(model, {{"a", Value(a)}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    const int64_t rows = a.num_elements() / k;
    Tensor a2 = Tensor::Allocate(DataType::kFloat, {rows, k});
    std::copy(a.data<float>(), a.data<float>() + a.num_elements(), a2.mutable_data<float>());
    ExpectClose((*out)[0], Reference(a2, b, false, nullptr, 1.f, 0.f), "A rank " + std::to_string(a_dims.size()));
  }
}

TEST(ConstantWeightProductsTest, OneInitializerReadInTwoLayoutsIsPackedTwice) {
  std::mt19937 rng(47);
  const int64_t k = 16;
  const Tensor w = Random({k, k}, rng), a = Random({4, k}, rng);
  ModelBuilder model(13);
  model.Input("a", DataType::kFloat, {4, k}).Initializer("w", w);
  model.Output("plain", DataType::kFloat, {4, k}).Output("transposed", DataType::kFloat, {4, k});
  model.Node("MatMul", {"a", "w"}, {"plain"});
  auto& gemm = model.Node("Gemm", {"a", "w"}, {"transposed"});
  *gemm.add_attribute() = IntAttr("transB", 1);
  auto out = RunModel(model, {{"a", Value(a)}}, {"plain", "transposed"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectClose((*out)[0], Reference(a, w, false, nullptr, 1.f, 0.f), "MatMul a x w");
  ExpectClose((*out)[1], Reference(a, w, true, nullptr, 1.f, 0.f), "Gemm a x w^T");
}

}  // namespace
}  // namespace onyx::testing
