#include "providers/cpu/ml/tree_ensemble.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onyx {
namespace {

constexpr DataType TypeOf(float) { return DataType::kFloat; }
constexpr DataType TypeOf(double) { return DataType::kDouble; }

// Values of a tensor attribute that must hold T (ONNX Runtime refuses a
// float tensor for a double ensemble and the reverse); empty when absent.
template <typename T>
absl::StatusOr<std::vector<T>> TensorValues(const OpKernelInfo& info, const std::string& name) {
  if (!info.HasAttr(name)) return std::vector<T>();
  auto t = info.Attr<Tensor>(name);
  if (!t.ok()) return t.status();
  if (t->type() != TypeOf(T())) {
    return info.Error(absl::StrCat("attribute '", name, "' holds ", DataTypeName(t->type()),
                                   " values, the input needs ", DataTypeName(TypeOf(T()))));
  }
  return std::vector<T>(t->data<T>(), t->data<T>() + t->num_elements());
}

// A float-list attribute or its *_as_tensor variant (at most one may be set).
template <typename T>
absl::StatusOr<std::vector<T>> FloatsOrTensor(const OpKernelInfo& info, const std::string& name) {
  const std::string tensor_name = name + "_as_tensor";
  auto tensor = TensorValues<T>(info, tensor_name);
  if (!tensor.ok()) return tensor.status();
  const std::vector<float> floats = info.AttrOr<std::vector<float>>(name, {});
  if (!floats.empty() && !tensor->empty()) {
    return info.Error(absl::StrCat("attributes '", name, "' and '", tensor_name, "' are both set"));
  }
  if (!tensor->empty()) return *std::move(tensor);
  return std::vector<T>(floats.begin(), floats.end());
}

absl::StatusOr<uint8_t> ParseV3Mode(const OpKernelInfo& info, const std::string& mode) {
  static const std::map<std::string, uint8_t> kModes = {{"BRANCH_LEQ", 0}, {"BRANCH_LT", 1}, {"BRANCH_GTE", 2},
                                                        {"BRANCH_GT", 3},  {"BRANCH_EQ", 4}, {"BRANCH_NEQ", 5},
                                                        {"LEAF", 7}};
  auto it = kModes.find(mode);
  if (it == kModes.end()) return info.Error(absl::StrCat("node mode '", mode, "' is not a BRANCH_* mode or LEAF"));
  return it->second;
}

}  // namespace

template <typename T>
struct TreeEnsemble<T>::Spec {
  std::vector<int64_t> tree_ids, node_ids, feature_ids, true_ids, false_ids, missing_true;
  std::vector<uint8_t> modes;
  std::vector<T> values;
  std::vector<std::vector<T>> member_sets;  // per node; only TreeEnsemble-5 has them
  std::vector<int64_t> w_tree, w_node, w_target;
  std::vector<T> w_value;
  std::vector<T> base_values;
  int64_t n_targets = 0;
  TreeAggregate aggregate = TreeAggregate::kSum;
};

template <typename T>
absl::StatusOr<TreeEnsemble<T>> TreeEnsemble<T>::FromV3(const OpKernelInfo& info, Kind kind) {
  const bool classifier = kind == Kind::kClassifier;
  Spec s;
  s.tree_ids = info.AttrOr<std::vector<int64_t>>("nodes_treeids", {});
  s.node_ids = info.AttrOr<std::vector<int64_t>>("nodes_nodeids", {});
  s.feature_ids = info.AttrOr<std::vector<int64_t>>("nodes_featureids", {});
  s.true_ids = info.AttrOr<std::vector<int64_t>>("nodes_truenodeids", {});
  s.false_ids = info.AttrOr<std::vector<int64_t>>("nodes_falsenodeids", {});
  s.missing_true = info.AttrOr<std::vector<int64_t>>("nodes_missing_value_tracks_true", {});
  for (const std::string& m : info.AttrOr<std::vector<std::string>>("nodes_modes", {})) {
    auto mode = ParseV3Mode(info, m);
    if (!mode.ok()) return mode.status();
    s.modes.push_back(*mode);
  }
  auto values = FloatsOrTensor<T>(info, "nodes_values");
  if (!values.ok()) return values.status();
  s.values = *std::move(values);
  const std::string prefix = classifier ? "class_" : "target_";
  s.w_tree = info.AttrOr<std::vector<int64_t>>(prefix + "treeids", {});
  s.w_node = info.AttrOr<std::vector<int64_t>>(prefix + "nodeids", {});
  s.w_target = info.AttrOr<std::vector<int64_t>>(prefix + "ids", {});
  auto weights = FloatsOrTensor<T>(info, prefix + "weights");
  if (!weights.ok()) return weights.status();
  s.w_value = *std::move(weights);
  auto base = FloatsOrTensor<T>(info, "base_values");
  if (!base.ok()) return base.status();
  s.base_values = *std::move(base);

  if (classifier) {
    const auto strings = info.AttrOr<std::vector<std::string>>("classlabels_strings", {});
    const auto ints = info.AttrOr<std::vector<int64_t>>("classlabels_int64s", {});
    s.n_targets = static_cast<int64_t>(strings.empty() ? ints.size() : strings.size());
    if (s.n_targets == 0) return info.Error("one of classlabels_strings, classlabels_int64s must be set");
    const size_t n = s.base_values.size();
    if (s.n_targets <= 2 ? n > 2 : (n != 0 && n != static_cast<size_t>(s.n_targets))) {
      return info.Error(
          absl::StrCat("base_values has ", n, " values, expected 0 or ", std::max<int64_t>(s.n_targets, 2)));
    }
  } else {
    s.n_targets = info.AttrOr<int64_t>("n_targets", 0);
    if (s.n_targets <= 0) return info.Error("n_targets must be positive");
    const size_t n = s.base_values.size();
    if (n != 0 && n != static_cast<size_t>(s.n_targets)) {
      return info.Error(absl::StrCat("base_values has ", n, " values, expected 0 or ", s.n_targets));
    }
    const std::string agg = info.AttrOr<std::string>("aggregate_function", "SUM");
    if (agg == "SUM") s.aggregate = TreeAggregate::kSum;
    else if (agg == "AVERAGE") s.aggregate = TreeAggregate::kAverage;
    else if (agg == "MIN") s.aggregate = TreeAggregate::kMin;
    else if (agg == "MAX") s.aggregate = TreeAggregate::kMax;
    else return info.Error(absl::StrCat("aggregate_function '", agg, "' is not one of SUM, AVERAGE, MIN, MAX"));
  }
  return Build(info, std::move(s));
}

template <typename T>
absl::StatusOr<TreeEnsemble<T>> TreeEnsemble<T>::FromV5(const OpKernelInfo& info) {
  const auto feature_ids = info.AttrOr<std::vector<int64_t>>("nodes_featureids", {});
  const auto true_ids = info.AttrOr<std::vector<int64_t>>("nodes_truenodeids", {});
  const auto false_ids = info.AttrOr<std::vector<int64_t>>("nodes_falsenodeids", {});
  const auto true_leafs = info.AttrOr<std::vector<int64_t>>("nodes_trueleafs", {});
  const auto false_leafs = info.AttrOr<std::vector<int64_t>>("nodes_falseleafs", {});
  const auto missing = info.AttrOr<std::vector<int64_t>>("nodes_missing_value_tracks_true", {});
  const auto leaf_targets = info.AttrOr<std::vector<int64_t>>("leaf_targetids", {});
  const auto roots = info.AttrOr<std::vector<int64_t>>("tree_roots", {});
  auto splits = TensorValues<T>(info, "nodes_splits");
  if (!splits.ok()) return splits.status();
  auto leaf_weights = TensorValues<T>(info, "leaf_weights");
  if (!leaf_weights.ok()) return leaf_weights.status();
  auto members = TensorValues<T>(info, "membership_values");
  if (!members.ok()) return members.status();
  std::vector<uint8_t> modes;
  if (info.HasAttr("nodes_modes")) {
    auto t = info.Attr<Tensor>("nodes_modes");
    if (!t.ok()) return t.status();
    if (t->type() != DataType::kUint8) return info.Error("attribute 'nodes_modes' must be a uint8 tensor");
    modes.assign(t->data<uint8_t>(), t->data<uint8_t>() + t->num_elements());
  }
  const size_t n = feature_ids.size();
  if (true_ids.size() != n || false_ids.size() != n || true_leafs.size() != n || false_leafs.size() != n ||
      modes.size() != n || splits->size() != n || (!missing.empty() && missing.size() != n)) {
    return info.Error(absl::StrCat("the nodes_* attributes must all have ", n, " entries"));
  }
  if (leaf_weights->size() != leaf_targets.size()) {
    return info.Error(
        absl::StrCat("leaf_weights has ", leaf_weights->size(), " entries, leaf_targetids ", leaf_targets.size()));
  }
  Spec s;
  s.n_targets = info.AttrOr<int64_t>("n_targets", 0);
  if (s.n_targets <= 0) return info.Error("n_targets must be positive");
  const int64_t agg = info.AttrOr<int64_t>("aggregate_function", 1);
  if (agg < 0 || agg > 3) return info.Error(absl::StrCat("aggregate_function ", agg, " is not in [0, 3]"));
  s.aggregate = static_cast<TreeAggregate>(agg);
  // The NaN-separated membership sets, in the order of the BRANCH_MEMBER nodes.
  std::vector<std::vector<T>> sets(n);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (modes[i] > 6) return info.Error(absl::StrCat("node ", i, " has mode ", modes[i], ", not in [0, 6]"));
    if (modes[i] != 6) continue;
    while (next < members->size() && !std::isnan((*members)[next])) sets[i].push_back((*members)[next++]);
    ++next;
  }
  // Walk each tree from its root, emitting one spec entry per visit; a node
  // reached twice (a shared subtree) is emitted twice, as ONNX Runtime does.
  const size_t cap = 4 * (n + leaf_targets.size()) + 16;
  for (size_t t = 0; t < roots.size(); ++t) {
    const int64_t root = roots[t];
    if (root < 0 || static_cast<size_t>(root) >= n)
      return info.Error(absl::StrCat("tree_roots[", t, "] is out of range"));
    struct Visit {
      int64_t index;
      bool leaf;
      int64_t id;
    };
    int64_t next_id = 0;
    std::vector<Visit> stack = {{root, false, next_id++}};
    while (!stack.empty()) {
      const Visit v = stack.back();
      stack.pop_back();
      if (s.tree_ids.size() > cap) return info.Error("the trees reference their own nodes in a cycle");
      const size_t limit = v.leaf ? leaf_targets.size() : n;
      if (v.index < 0 || static_cast<size_t>(v.index) >= limit) {
        return info.Error(
            absl::StrCat("tree ", t, " references ", v.leaf ? "leaf " : "node ", v.index, ", out of range"));
      }
      s.tree_ids.push_back(static_cast<int64_t>(t));
      s.node_ids.push_back(v.id);
      s.member_sets.emplace_back();
      if (v.leaf) {
        s.feature_ids.push_back(0);
        s.true_ids.push_back(0);
        s.false_ids.push_back(0);
        s.missing_true.push_back(0);
        s.modes.push_back(kLeaf);
        s.values.push_back(T(0));
        s.w_tree.push_back(static_cast<int64_t>(t));
        s.w_node.push_back(v.id);
        s.w_target.push_back(leaf_targets[v.index]);
        s.w_value.push_back((*leaf_weights)[v.index]);
        continue;
      }
      const Visit on_true{true_ids[v.index], true_leafs[v.index] != 0, next_id++};
      const Visit on_false{false_ids[v.index], false_leafs[v.index] != 0, next_id++};
      s.feature_ids.push_back(feature_ids[v.index]);
      s.true_ids.push_back(on_true.id);
      s.false_ids.push_back(on_false.id);
      s.missing_true.push_back(missing.empty() ? 0 : missing[v.index]);
      s.modes.push_back(modes[v.index]);
      s.values.push_back((*splits)[v.index]);
      s.member_sets.back() = sets[v.index];
      stack.push_back(on_false);
      stack.push_back(on_true);
    }
  }
  return Build(info, std::move(s));
}

template <typename T>
absl::StatusOr<TreeEnsemble<T>> TreeEnsemble<T>::Build(const OpKernelInfo& info, Spec s) {
  const size_t n = s.tree_ids.size();
  if (s.node_ids.size() != n || s.feature_ids.size() != n || s.true_ids.size() != n || s.false_ids.size() != n ||
      s.modes.size() != n || s.values.size() != n) {
    return info.Error(absl::StrCat("the nodes_* attributes must all have ", n, " entries"));
  }
  if (s.w_node.size() != s.w_tree.size() || s.w_target.size() != s.w_tree.size() ||
      s.w_value.size() != s.w_tree.size()) {
    return info.Error("the leaf weight attributes (tree ids, node ids, target ids, weights) differ in length");
  }
  if (n >= static_cast<size_t>(INT32_MAX) || s.w_tree.size() >= static_cast<size_t>(INT32_MAX)) {
    return info.Error("too many tree nodes");
  }
  TreeEnsemble e;
  e.n_targets_ = s.n_targets;
  e.aggregate_ = s.aggregate;
  e.base_values_ = std::move(s.base_values);
  e.nodes_.resize(n);
  std::map<std::pair<int64_t, int64_t>, int32_t> index;
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(std::make_pair(s.tree_ids[i], s.node_ids[i]), static_cast<int32_t>(i)).second) {
      return info.Error(absl::StrCat("node ", s.node_ids[i], " of tree ", s.tree_ids[i], " is listed twice"));
    }
    if (s.feature_ids[i] < 0 || s.feature_ids[i] >= INT32_MAX) {
      return info.Error(
          absl::StrCat("node ", s.node_ids[i], " of tree ", s.tree_ids[i], " has feature id ", s.feature_ids[i]));
    }
    Node& node = e.nodes_[i];
    node.value = s.values[i];
    node.feature = static_cast<int32_t>(s.feature_ids[i]);
    node.mode = s.modes[i];
    node.missing_true = i < s.missing_true.size() && s.missing_true[i] == 1;
    node.true_next = node.false_next = 0;
    e.set_of_.push_back(-1);
    if (node.mode == kMember) {
      e.set_of_.back() = static_cast<int32_t>(e.sets_.size());
      e.sets_.push_back(s.member_sets[i]);
    }
    e.max_feature_ = std::max<int64_t>(e.max_feature_, node.feature);
    if (i == 0 || s.tree_ids[i] != s.tree_ids[i - 1]) e.roots_.push_back(static_cast<int32_t>(i));
  }
  for (size_t i = 0; i < n; ++i) {
    Node& node = e.nodes_[i];
    if (node.mode == kLeaf) continue;
    for (int side = 0; side < 2; ++side) {
      const int64_t id = side == 0 ? s.true_ids[i] : s.false_ids[i];
      auto it = index.find({s.tree_ids[i], id});
      if (it == index.end() || it->second == static_cast<int32_t>(i)) {
        return info.Error(absl::StrCat("node ", s.node_ids[i], " of tree ", s.tree_ids[i], " has ",
                                       side == 0 ? "true" : "false", " branch ", id,
                                       it == index.end() ? ", which is not a node of the tree" : ", itself"));
      }
      (side == 0 ? node.true_next : node.false_next) = it->second;
    }
  }
  // Weights in (tree, node, listed) order; a weight on a branch node is
  // ignored, as ONNX Runtime does for models of old converters.
  std::vector<size_t> order(s.w_tree.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&s](size_t a, size_t b) {
    return std::make_pair(s.w_tree[a], s.w_node[a]) < std::make_pair(s.w_tree[b], s.w_node[b]);
  });
  std::set<int64_t> targets;
  for (size_t k = 0; k < s.w_tree.size(); ++k) {
    targets.insert(s.w_target[k]);
    if (s.w_value[k] < 0) e.weights_nonnegative_ = false;
    if (s.w_target[k] < 0 || s.w_target[k] >= s.n_targets) {
      return info.Error(absl::StrCat("target/class id ", s.w_target[k], " is not below the count ", s.n_targets));
    }
  }
  e.distinct_targets_ = static_cast<int64_t>(targets.size());
  for (size_t k : order) {
    auto it = index.find({s.w_tree[k], s.w_node[k]});
    if (it == index.end()) {
      return info.Error(
          absl::StrCat("a weight names node ", s.w_node[k], " of tree ", s.w_tree[k], ", which is not listed"));
    }
    Node& leaf = e.nodes_[it->second];
    if (leaf.mode != kLeaf) continue;
    if (leaf.false_next == 0) {
      leaf.true_next = static_cast<int32_t>(e.weights_.size());
      leaf.value = s.w_value[k];
    }
    ++leaf.false_next;
    e.weights_.push_back({static_cast<int32_t>(s.w_target[k]), s.w_value[k]});
  }
  e.all_leq_ = std::all_of(e.nodes_.begin(), e.nodes_.end(), [](const Node& node) {
    return node.mode == kLeaf || (node.mode == kLeq && !node.missing_true);
  });
  // A cycle would make traversal loop forever: colour-marking DFS.
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<int32_t, int>> stack;
  for (size_t start = 0; start < n; ++start) {
    if (state[start] != 0) continue;
    stack.push_back({static_cast<int32_t>(start), 0});
    state[start] = 1;
    while (!stack.empty()) {
      auto& [i, side] = stack.back();
      const Node& node = e.nodes_[i];
      if (node.mode == kLeaf || side == 2) {
        state[i] = 2;
        stack.pop_back();
        continue;
      }
      const int32_t child = side++ == 0 ? node.true_next : node.false_next;
      if (state[child] == 1) {
        return info.Error(absl::StrCat("tree ", s.tree_ids[child], " has a cycle through node ", s.node_ids[child]));
      }
      if (state[child] == 0) {
        state[child] = 1;
        stack.push_back({child, 0});
      }
    }
  }
  return e;
}

template <typename T>
template <typename I>
const typename TreeEnsemble<T>::Node& TreeEnsemble<T>::Leaf(int32_t root, const I* x) const {
  const Node* node = &nodes_[root];
  while (node->mode != kLeaf) {
    const I v = x[node->feature];
    bool go_true = false;
    switch (node->mode) {
      case kLeq: go_true = v <= node->value; break;
      case kLt: go_true = v < node->value; break;
      case kGte: go_true = v >= node->value; break;
      case kGt: go_true = v > node->value; break;
      case kEq: go_true = v == node->value; break;
      case kNeq: go_true = v != node->value; break;
      case kMember: {
        const std::vector<T>& set = sets_[set_of_[node - nodes_.data()]];
        go_true = std::find(set.begin(), set.end(), v) != set.end();
        break;
      }
      default: break;
    }
    if constexpr (std::is_floating_point_v<I>) go_true = go_true || (node->missing_true && std::isnan(v));
    node = &nodes_[go_true ? node->true_next : node->false_next];
  }
  return *node;
}

template <typename T>
template <typename I>
void TreeEnsemble<T>::AddLeaf(const Node& leaf, RowScores<T>* s) const {
  const bool is_min = aggregate_ == TreeAggregate::kMin;
  const bool is_max = aggregate_ == TreeAggregate::kMax;
  if (n_targets_ == 1) {
    const T v = leaf.value;
    if (is_min) s->single = (!s->single_has || v < s->single) ? v : s->single;
    else if (is_max) s->single = (!s->single_has || v > s->single) ? v : s->single;
    else s->single += v;
    s->single_has = is_min || is_max;
    return;
  }
  for (int32_t k = leaf.true_next; k < leaf.true_next + leaf.false_next; ++k) {
    const Weight& w = weights_[k];
    T& score = s->score[w.target];
    const bool had = s->has[w.target] != 0;
    if (is_min) score = (!had || w.value < score) ? w.value : score;
    else if (is_max) score = (!had || w.value > score) ? w.value : score;
    else score += w.value;
    s->has[w.target] = 1;
  }
}

template <typename T>
template <typename I>
void TreeEnsemble<T>::Accumulate(const I* x, int64_t stride, int64_t rows, RowScores<T>* s) const {
  for (int32_t root : roots_) {
    if (all_leq_) {
      // The common converter output: one comparison per level, no mode switch.
      for (int64_t r = 0; r < rows; ++r) {
        const I* row = x + r * stride;
        const Node* node = &nodes_[root];
        while (node->mode != kLeaf)
          node = &nodes_[row[node->feature] <= node->value ? node->true_next : node->false_next];
        AddLeaf<I>(*node, &s[r]);
      }
    } else {
      for (int64_t r = 0; r < rows; ++r) AddLeaf<I>(Leaf(root, x + r * stride), &s[r]);
    }
  }
}

template class TreeEnsemble<float>;
template class TreeEnsemble<double>;
template void TreeEnsemble<float>::Accumulate<float>(const float*, int64_t, int64_t, RowScores<float>*) const;
template void TreeEnsemble<float>::Accumulate<int64_t>(const int64_t*, int64_t, int64_t, RowScores<float>*) const;
template void TreeEnsemble<float>::Accumulate<int32_t>(const int32_t*, int64_t, int64_t, RowScores<float>*) const;
template void TreeEnsemble<double>::Accumulate<double>(const double*, int64_t, int64_t, RowScores<double>*) const;

}  // namespace onyx
