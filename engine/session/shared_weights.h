// Weights shared across the sessions of one model.
//
// Sessions created with the same SessionOptions::shared_weights_group (a
// server's bucket sessions of one model version) keep a single copy of every
// initializer whose name, type, shape and bytes agree — including the ones
// rewriting produced (folded constants, BN-folded weights). The group lives
// while at least one of its sessions does. Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "graph/graph.h"

namespace onyx {

class SharedWeightsGroup;

// Joins `group` (creating it if needed) and swaps `graph`'s initializers
// (recursively, subgraphs included) for the group's identical tensors,
// contributing the ones it lacks. The returned handle keeps the group alive.
std::shared_ptr<SharedWeightsGroup> ShareWeights(const std::string& group, Graph& graph);

// Number of distinct tensors a live group holds (0 when the group is gone).
size_t SharedWeightsCount(const std::string& group);

}  // namespace onyx
