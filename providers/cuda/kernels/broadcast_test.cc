// The host-side planning of the shaped kernels (broadcast.h, fast_divmod.h,
// spatial.h), checked by replaying the kernels' index arithmetic on the host
// against index computations written out directly. Needs no GPU.
#include "providers/cuda/kernels/broadcast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "providers/cuda/kernels/fast_divmod.h"
#include "providers/cuda/kernels/spatial.h"

namespace onyx::cuda_ops {
namespace {

std::mt19937 rng(42);
int64_t Rand(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

std::vector<int64_t> RandDims(int rank, int64_t max_dim) {
  std::vector<int64_t> d(rank);
  for (auto& v : d) v = Rand(1, max_dim);
  return d;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (int k = static_cast<int>(d.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * d[k + 1];
  return s;
}

std::vector<int64_t> Coords(int64_t i, const std::vector<int64_t>& d) {
  std::vector<int64_t> c(d.size());
  for (int k = static_cast<int>(d.size()) - 1; k >= 0; --k) {
    c[k] = i % d[k];
    i /= d[k];
  }
  return c;
}

// IndexMap::Offset of cuda_common.cuh, on the host.
int64_t Offset(const int64_t* dims, const int64_t* strides, int rank, uint32_t index) {
  std::vector<int64_t> d(dims, dims + rank);
  const std::vector<int64_t> out_strides = Strides(d);
  int64_t offset = 0;
  for (int k = 0; k < rank; ++k) {
    const FastDivmod div(out_strides[k]);
    const uint32_t q = div.Div(index);
    index -= q * div.d;
    offset += static_cast<int64_t>(q) * strides[k];
  }
  return offset;
}

TEST(FastDivmodTest, MatchesDivision) {
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= 2000; ++d) divisors.push_back(d);
  for (int s = 1; s < 31; ++s) {
    divisors.insert(divisors.end(), {(int64_t{1} << s) - 1, int64_t{1} << s, (int64_t{1} << s) + 1});
  }
  for (int i = 0; i < 2000; ++i) divisors.push_back(Rand(1, (int64_t{1} << 31) - 1));
  for (int64_t d : divisors) {
    const FastDivmod f(d);
    std::vector<uint32_t> ns = {0, 1, static_cast<uint32_t>(d - 1), 0x7fffffffu, 0x7ffffffeu};
    for (int i = 0; i < 64; ++i) ns.push_back(static_cast<uint32_t>(Rand(0, 0x7fffffff)));
    for (int i = 0; i < 16; ++i) {
      const int64_t multiple = d * Rand(0, 0x7fffffff / d);
      ns.push_back(static_cast<uint32_t>(multiple));
      if (multiple > 0) ns.push_back(static_cast<uint32_t>(multiple - 1));
    }
    for (uint32_t n : ns) {
      ASSERT_EQ(f.Div(n), n / static_cast<uint32_t>(d)) << n << " / " << d;
      ASSERT_EQ(f.Mod(n), n % static_cast<uint32_t>(d)) << n << " % " << d;
    }
  }
}

TEST(BroadcastTest, OffsetsMatchNumpyBroadcasting) {
  for (int iter = 0; iter < 1500; ++iter) {
    const int count = static_cast<int>(Rand(1, 3)), rank = static_cast<int>(Rand(0, 6));
    const std::vector<int64_t> out = RandDims(rank, 4);
    std::vector<std::vector<int64_t>> inputs(count);
    for (auto& in : inputs) {
      in.assign(out.end() - Rand(0, rank), out.end());
      for (auto& v : in) v = Rand(0, 2) == 0 ? 1 : v;
    }
    const std::vector<absl::Span<const int64_t>> spans(inputs.begin(), inputs.end());
    auto shape = BroadcastShape(spans);
    ASSERT_TRUE(shape.ok()) << shape.status();
    const std::vector<int64_t> o(shape->begin(), shape->end());
    auto args = MakeBroadcastArgs(o, spans);
    ASSERT_TRUE(args.ok()) << args.status();
    ASSERT_EQ(args->n, NumElements(o));
    for (int64_t i = 0; i < args->n; ++i) {
      const std::vector<int64_t> c = Coords(i, o);
      for (int k = 0; k < count; ++k) {
        const std::vector<int64_t>& d = inputs[k];
        const std::vector<int64_t> st = Strides(d);
        const size_t shift = o.size() - d.size();
        int64_t expected = 0;
        for (size_t j = 0; j < d.size(); ++j) expected += (d[j] == 1 ? 0 : c[j + shift]) * st[j];
        ASSERT_EQ(Offset(args->dims, args->strides[k], args->rank, static_cast<uint32_t>(i)), expected);
        if (args->contiguous[k]) {
          ASSERT_EQ(expected, i);
        }
        if (args->scalar[k]) {
          ASSERT_EQ(expected, 0);
        }
      }
    }
  }
}

TEST(BroadcastTest, RefusesIncompatibleShapes) {
  const std::vector<int64_t> a = {2, 3}, b = {4};
  EXPECT_FALSE(BroadcastShape({a, b}).ok());
}

TEST(TransposeTest, PlansMatchThePermutation) {
  for (int iter = 0; iter < 1500; ++iter) {
    const int rank = static_cast<int>(Rand(1, 6));
    std::vector<int64_t> dims = RandDims(rank, 5);
    if (Rand(0, 2) == 0) dims[Rand(0, rank - 1)] = Rand(30, 70);
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const size_t elem = size_t{1} << Rand(0, 3);
    auto plan = PlanTranspose(dims, perm, elem);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const int64_t n = NumElements(dims);
    std::vector<int64_t> x(n), out_dims, y(n, -1), expected(n);
    std::iota(x.begin(), x.end(), 0);
    for (int64_t p : perm) out_dims.push_back(dims[p]);
    const std::vector<int64_t> st = Strides(dims);
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<int64_t> c = Coords(i, out_dims);
      int64_t off = 0;
      for (int k = 0; k < rank; ++k) off += c[k] * st[perm[k]];
      expected[i] = x[off];
    }
    switch (plan->kind) {
      case TransposePlan::Kind::kCopy: y = x; break;
      case TransposePlan::Kind::kTiled: {
        const int64_t rows = plan->rows, cols = plan->cols;
        ASSERT_EQ(plan->batch * rows * cols, n);
        for (int64_t b = 0; b < plan->batch; ++b) {
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < cols; ++c) y[b * rows * cols + c * rows + r] = x[b * rows * cols + r * cols + c];
          }
        }
        break;
      }
      case TransposePlan::Kind::kStrided: {
        StridedCopyArgs a = plan->strided;
        size_t unit = elem;
        WidenInnermost(a, unit, reinterpret_cast<void*>(256), reinterpret_cast<void*>(512));
        const int64_t f = static_cast<int64_t>(unit / elem);
        ASSERT_EQ(a.n * f, n);
        for (int64_t i = 0; i < a.n; ++i) {
          const int64_t src = (a.base + Offset(a.out_dims, a.in_strides, a.rank, static_cast<uint32_t>(i))) * f;
          for (int64_t u = 0; u < f; ++u) y[i * f + u] = x[src + u];
        }
        break;
      }
    }
    ASSERT_EQ(y, expected) << "rank " << rank << " kind " << static_cast<int>(plan->kind);
  }
}

TEST(StridedCopyTest, SlicesWithNegativeStepsAndExpands) {
  for (int iter = 0; iter < 1500; ++iter) {
    const int rank = static_cast<int>(Rand(1, 5));
    const std::vector<int64_t> dims = RandDims(rank, 6), st = Strides(dims);
    std::vector<int64_t> start(rank), step(rank), out(rank), in_strides(rank);
    int64_t base = 0;
    for (int k = 0; k < rank; ++k) {
      step[k] = Rand(0, 2) == 0 ? -Rand(1, 2) : Rand(1, 2);
      start[k] = Rand(0, dims[k] - 1);
      const int64_t avail = step[k] > 0 ? dims[k] - start[k] : start[k] + 1;
      out[k] = Rand(1, (avail + std::abs(step[k]) - 1) / std::abs(step[k]));
      base += start[k] * st[k];
      in_strides[k] = step[k] * st[k];
    }
    auto args = MakeStridedCopy(out, in_strides, base);
    ASSERT_TRUE(args.ok()) << args.status();
    StridedCopyArgs a = *args;
    size_t unit = 4;
    WidenInnermost(a, unit, reinterpret_cast<void*>(256), reinterpret_cast<void*>(512));
    const int64_t f = static_cast<int64_t>(unit / 4);
    for (int64_t i = 0; i < NumElements(out); ++i) {
      const std::vector<int64_t> c = Coords(i, out);
      int64_t expected = 0;
      for (int k = 0; k < rank; ++k) expected += (start[k] + c[k] * step[k]) * st[k];
      const int64_t got = (a.base + Offset(a.out_dims, a.in_strides, a.rank, static_cast<uint32_t>(i / f))) * f + i % f;
      ASSERT_EQ(got, expected);
    }
  }
  for (int iter = 0; iter < 1000; ++iter) {
    const int rank = static_cast<int>(Rand(0, 5));
    const std::vector<int64_t> out = RandDims(rank, 4);
    const int r = static_cast<int>(Rand(0, rank));
    std::vector<int64_t> x(out.end() - r, out.end());
    for (auto& v : x) v = Rand(0, 2) == 0 ? 1 : v;
    auto a = MakeExpandCopy(x, out);
    ASSERT_TRUE(a.ok()) << a.status();
    const std::vector<int64_t> st = Strides(x);
    for (int64_t i = 0; i < NumElements(out); ++i) {
      const std::vector<int64_t> c = Coords(i, out);
      int64_t expected = 0;
      for (int j = 0; j < r; ++j) expected += (x[j] == 1 ? 0 : c[j + rank - r]) * st[j];
      ASSERT_EQ(a->base + Offset(a->out_dims, a->in_strides, a->rank, static_cast<uint32_t>(i)), expected);
    }
  }
}

TEST(SpatialTest, ConvAndPoolGeometry) {
  SpatialAttributes same;
  same.auto_pad = "SAME_UPPER";
  same.strides = {2, 2};
  auto conv = ResolveConvGeometry(same, {7, 8}, {4, 3});
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_EQ(conv->out, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(conv->pad_begin, (std::vector<int64_t>{1, 0}));  // total 3 and 1: the extra pad goes at the end
  EXPECT_EQ(conv->pad_end, (std::vector<int64_t>{2, 1}));

  SpatialAttributes pool;
  pool.kernel_shape = {3, 3};
  pool.strides = {2, 2};
  pool.pads = {1, 1, 1, 1};
  pool.ceil_mode = true;
  auto g = ResolvePoolGeometry(pool, {6, 7});
  ASSERT_TRUE(g.ok()) << g.status();
  // ceil((6 + 2 - 3) / 2) + 1 = 4, the last window starting inside the input; ceil(6 / 2) + 1 = 4.
  EXPECT_EQ(g->out, (std::vector<int64_t>{4, 4}));

  SpatialAttributes bad;
  bad.strides = {1};
  EXPECT_FALSE(ResolveConvGeometry(bad, {5, 5}, {3, 3}).ok());
}

}  // namespace
}  // namespace onyx::cuda_ops
