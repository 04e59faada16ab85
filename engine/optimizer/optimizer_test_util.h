// Test helpers for the graph passes: run a model unoptimised and at a level,
// check that the outputs agree, and count the op types each session kept.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx::testing {

struct Compared {
  std::map<std::string, int64_t> before;
  std::map<std::string, int64_t> after;
};

// Runs the model with optimisation disabled and at `level`, checks the outputs
// agree, and returns both op histograms.
// `runs` > 1 runs the optimised session again on the same feeds, checking
// each result: from the second run on, buffers come from the learned memory
// pattern, where outputs may share their inputs' buffers.
inline Compared CompareLevels(const ModelBuilder& m, const Feeds& feeds,
                              OptimizationLevel level = OptimizationLevel::kAll, int runs = 1) {
  SessionOptions plain;
  plain.optimization_level = OptimizationLevel::kDisabled;
  SessionOptions optimized;
  optimized.optimization_level = level;
  auto a = InferenceSession::CreateFromBytes(m.Serialize(), plain);
  auto b = InferenceSession::CreateFromBytes(m.Serialize(), optimized);
  EXPECT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(b.ok()) << b.status();
  if (!a.ok() || !b.ok()) return {};
  auto ya = (*a)->Run(RunOptions(), feeds, {});
  EXPECT_TRUE(ya.ok()) << ya.status();
  for (int run = 0; run < runs; ++run) {
    auto yb = (*b)->Run(RunOptions(), feeds, {});
    EXPECT_TRUE(yb.ok()) << yb.status();
    if (!ya.ok() || !yb.ok()) break;
    EXPECT_EQ(ya->size(), yb->size());
    for (size_t o = 0; o < ya->size() && o < yb->size(); ++o) {
      const Tensor& ta = (*ya)[o].tensor();
      const Tensor& tb = (*yb)[o].tensor();
      EXPECT_EQ(ta.dims(), tb.dims());
      for (int64_t i = 0; i < ta.num_elements() && i < tb.num_elements(); ++i) {
        float x = ta.data<float>()[i], y = tb.data<float>()[i];
        if (x == y) continue;  // equal infinities too (a max pool's window wholly in padding)
        EXPECT_NEAR(x, y, 1e-5 * std::max(1.f, std::fabs(x))) << "run " << run << " output " << o << " element " << i;
      }
    }
  }
  return {(*a)->op_histogram(), (*b)->op_histogram()};
}

inline int64_t Count(const std::map<std::string, int64_t>& h, const std::string& op) {
  auto it = h.find(op);
  return it == h.end() ? 0 : it->second;
}

inline int64_t Total(const std::map<std::string, int64_t>& h) {
  int64_t n = 0;
  for (const auto& [op, c] : h) n += c;
  return n;
}

}  // namespace onyx::testing
