// DnnlMatMul against a product written out here in double, with and without
// bias, with Relu and GELU, over row counts 1 to 37 and K, N that are not
// multiples of oneDNN's blocks; the packed B is shared across row counts and
// rerunning a row count gives the same values; B itself is not kept.
#include "providers/cpu/math/dnnl_matmul.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace onyx {
namespace {

Tensor Random(const Dims& dims, std::mt19937& rng) {
  Tensor t = Tensor::Allocate(DataType::kFloat, dims);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

double Activate(DnnlMatMul::Activation a, double v) {
  switch (a) {
    case DnnlMatMul::Activation::kNone: return v;
    case DnnlMatMul::Activation::kRelu: return v > 0 ? v : 0;
    case DnnlMatMul::Activation::kGelu: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  }
  return v;
}

struct Case {
  int64_t k, n;
  bool bias;
  DnnlMatMul::Activation activation;
};

TEST(DnnlMatMulTest, MatchesTheProductInDouble) {
  const Case cases[] = {{8, 6, true, DnnlMatMul::Activation::kNone},
                        {33, 17, true, DnnlMatMul::Activation::kRelu},
                        {64, 70, false, DnnlMatMul::Activation::kGelu},
                        {5, 129, true, DnnlMatMul::Activation::kGelu}};
  std::mt19937 rng(5);
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "K " << c.k << " N " << c.n << " bias " << c.bias);
    const Tensor b = Random({c.k, c.n}, rng), bias = Random({c.n}, rng);
    auto mm = DnnlMatMul::Create(b, c.bias ? &bias : nullptr, c.activation);
    ASSERT_TRUE(mm.ok()) << mm.status();
    for (int64_t rows : {1, 4, 37, 4}) {
      const Tensor a = Random({rows, c.k}, rng);
      std::vector<float> y(rows * c.n, -7.f);
      ASSERT_TRUE((*mm)->Run(a.data<float>(), rows, y.data()).ok());
      double worst = 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < c.n; ++j) {
          double sum = c.bias ? bias.data<float>()[j] : 0.0;
          for (int64_t i = 0; i < c.k; ++i) sum += double(a.data<float>()[r * c.k + i]) * b.data<float>()[i * c.n + j];
          const double expected = Activate(c.activation, sum);
          worst = std::max(worst, std::fabs(y[r * c.n + j] - expected) / (1.0 + std::fabs(expected)));
        }
      }
      EXPECT_LT(worst, 2e-6) << "rows " << rows;
    }
  }
}

// Only the packed copy is kept: B's own buffer has no other owner once
// Create returns, other row counts (other primitives, maybe other layouts)
// are served from the copy, and PlainB rebuilds B exactly, as given or
// transposed.
TEST(DnnlMatMulTest, KeepsOnlyThePackedCopyOfB) {
  std::mt19937 rng(7);
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "B as [N, K]" : "B as [K, N]");
    const int64_t k = 19, n = 35;
    Tensor b = Random(transposed ? Dims{n, k} : Dims{k, n}, rng);
    const std::vector<float> b_values(b.data<float>(), b.data<float>() + b.num_elements());
    auto mm = DnnlMatMul::Create(b, nullptr, DnnlMatMul::Activation::kNone, transposed, /*rows_hint=*/3);
    ASSERT_TRUE(mm.ok()) << mm.status();
    EXPECT_EQ(b.owner().use_count(), 1);
    b = Tensor();
    for (int64_t rows : {3, 1, 64, 5}) {
      const Tensor a = Random({rows, k}, rng);
      std::vector<float> y(rows * n);
      ASSERT_TRUE((*mm)->Run(a.data<float>(), rows, y.data()).ok());
      double worst = 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t i = 0; i < k; ++i) {
            sum += double(a.data<float>()[r * k + i]) * b_values[transposed ? j * k + i : i * n + j];
          }
          worst = std::max(worst, std::fabs(y[r * n + j] - sum) / (1.0 + std::fabs(sum)));
        }
      }
      EXPECT_LT(worst, 2e-6) << "rows " << rows;
    }
    auto plain = (*mm)->PlainB();
    ASSERT_TRUE(plain.ok()) << plain.status();
    ASSERT_EQ(plain->dims(), (transposed ? Dims{n, k} : Dims{k, n}));
    EXPECT_EQ(std::vector<float>(plain->data<float>(), plain->data<float>() + plain->num_elements()), b_values);
  }
}

TEST(DnnlMatMulTest, RefusesShapesThatDoNotFit) {
  std::mt19937 rng(6);
  const Tensor b3 = Random({2, 3, 4}, rng), b = Random({3, 4}, rng), bias = Random({3}, rng);
  EXPECT_EQ(DnnlMatMul::Create(b3, nullptr, DnnlMatMul::Activation::kNone).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto wrong_bias = DnnlMatMul::Create(b, &bias, DnnlMatMul::Activation::kNone);
  EXPECT_EQ(wrong_bias.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_bias.status().message().find("4 values"), std::string::npos) << wrong_bias.status();
}

}  // namespace
}  // namespace onyx
