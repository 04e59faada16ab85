// TreeEnsemble<T>: the trees of a TreeEnsembleClassifier/Regressor (ml opsets
// 1-3) or TreeEnsemble (ml opset 5), flattened once at kernel creation into
// one node array, and the per-row traversal and aggregation.
//
//   ASSIGN_OR_RETURN(auto trees, TreeEnsemble<float>::FromV3(info, TreeEnsemble<float>::Kind::kRegressor));
//   std::vector<RowScores<float>> s(rows, RowScores<float>(trees.n_targets()));
//   trees.Accumulate(x, /*stride=*/features, rows, s.data());  // then finalize each row
//
// T is the type of thresholds and scores: double for double inputs, float
// otherwise, as in ONNX Runtime. Rows are evaluated in blocks with the trees in
// the outer loop, so one tree stays in cache across the block. Trees are found as ONNX Runtime finds them: a
// tree starts at each node whose tree id differs from the previous node's, and
// that first node is its root (converters list each tree from its root;
// ONNX Runtime 1.30 treats other orders differently and sometimes refuses
// them). Thread-compatible: immutable after creation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"

namespace onyx {

enum class TreeAggregate { kAverage, kSum, kMin, kMax };

// Scores of one row while its trees are summed: one slot per target or class,
// with a flag telling whether any leaf reached it (ONNX Runtime writes 0 for a
// slot no leaf reached, whatever base value was added to it).
template <typename T>
struct RowScores {
  explicit RowScores(int64_t n) : score(n), has(n) {}
  void Reset() {
    std::fill(score.begin(), score.end(), T(0));
    std::fill(has.begin(), has.end(), 0);
    single = T(0);
    single_has = false;
  }
  std::vector<T> score;
  std::vector<uint8_t> has;
  // The single-target path keeps its sum here (ONNX Runtime's "1 output" path).
  T single = 0;
  bool single_has = false;
};

template <typename T>
class TreeEnsemble {
 public:
  enum class Kind { kClassifier, kRegressor };

  // TreeEnsembleClassifier / TreeEnsembleRegressor attributes (class_* or
  // target_*, the *_as_tensor variants). The number of targets is n_targets
  // for a regressor, the number of class labels for a classifier.
  static absl::StatusOr<TreeEnsemble> FromV3(const OpKernelInfo& info, Kind kind);
  // TreeEnsemble-5 attributes.
  static absl::StatusOr<TreeEnsemble> FromV5(const OpKernelInfo& info);

  int64_t n_targets() const { return n_targets_; }
  int64_t n_trees() const { return static_cast<int64_t>(roots_.size()); }
  // The largest feature index any node reads; inputs need more columns.
  int64_t max_feature() const { return max_feature_; }
  // Classifier facts ONNX Runtime decides the binary case by: how many
  // distinct class ids the weights name, and whether no weight is negative.
  int64_t distinct_targets() const { return distinct_targets_; }
  bool weights_nonnegative() const { return weights_nonnegative_; }
  TreeAggregate aggregate() const { return aggregate_; }
  const std::vector<T>& base_values() const { return base_values_; }

  // Adds the leaves each of `rows` rows of `x` (`stride` apart) reaches in
  // every tree to s[row], tree by tree in order: with one target into
  // s[row].single (each leaf's first weight, or the leaf node's own value when
  // it has none), else into the target slots.
  template <typename I>
  void Accumulate(const I* x, int64_t stride, int64_t rows, RowScores<T>* s) const;

 private:
  enum Mode : uint8_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember, kLeaf };
  struct Node {
    T value;  // threshold; for a leaf, its first weight
    int32_t feature;
    uint8_t mode;
    uint8_t missing_true;
    int32_t true_next;   // branch: node index; leaf: first weight in weights_
    int32_t false_next;  // branch: node index; leaf: number of weights
  };
  struct Weight {
    int32_t target;
    T value;
  };
  // One node per (tree, node) entry, as parsed from either attribute format.
  struct Spec;
  static absl::StatusOr<TreeEnsemble> Build(const OpKernelInfo& info, Spec spec);
  template <typename I>
  const Node& Leaf(int32_t root, const I* x) const;
  template <typename I>
  void AddLeaf(const Node& leaf, RowScores<T>* s) const;

  std::vector<Node> nodes_;
  std::vector<int32_t> roots_;
  std::vector<Weight> weights_;
  std::vector<std::vector<T>> sets_;
  std::vector<int32_t> set_of_;  // per node: its index in sets_ (kMember only)
  bool all_leq_ = false;         // every branch is BRANCH_LEQ without missing-value tracking
  std::vector<T> base_values_;
  int64_t n_targets_ = 0;
  int64_t max_feature_ = -1;
  int64_t distinct_targets_ = 0;
  bool weights_nonnegative_ = true;
  TreeAggregate aggregate_ = TreeAggregate::kSum;
};

// Evaluates `rows` rows of x (`stride` apart) in parallel blocks and calls
// finish(row, scores) once per row, from the thread that summed it.
template <typename T, typename I, typename Fn>
void ForEachRowBlock(const TreeEnsemble<T>& e, const I* x, int64_t stride, int64_t rows, Fn finish) {
  constexpr int64_t kBlock = 128;  // rows sharing one pass over the trees
  const int64_t blocks = (rows + kBlock - 1) / kBlock;
  const int64_t work = std::max<int64_t>(1, e.n_trees()) * kBlock;
  ParallelFor(blocks, std::max<int64_t>(1, (int64_t{1} << 16) / work), [&](int64_t begin, int64_t end) {
    std::vector<RowScores<T>> s(kBlock, RowScores<T>(e.n_targets()));
    for (int64_t b = begin; b < end; ++b) {
      const int64_t first = b * kBlock;
      const int64_t n = std::min(kBlock, rows - first);
      for (int64_t r = 0; r < n; ++r) s[r].Reset();
      e.Accumulate(x + first * stride, stride, n, s.data());
      for (int64_t r = 0; r < n; ++r) finish(first + r, s[r]);
    }
  });
}

extern template class TreeEnsemble<float>;
extern template class TreeEnsemble<double>;

}  // namespace onyx
