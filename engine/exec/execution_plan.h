// ExecutionPlan: a compiled graph as flat arrays, built once per session.
// Every value gets a slot index; nodes refer to slots, so Run() does no name
// lookups. Constants are pre-bound; each node lists the slots that die after it.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framework/bfc_arena.h"
#include "framework/op_kernel.h"
#include "onyx/run_options.h"
#include "onyx/session_stats.h"
#include "onyx/tensor.h"

namespace onyx {

struct ExecutionPlan;

// Latency of one node over all runs (lock-free; read for metrics): a handful
// of relaxed atomic adds per node run, no lock, no allocation.
struct NodeStats {
  std::atomic<int64_t> count{0};
  std::atomic<int64_t> total_ns{0};
  std::atomic<int64_t> max_ns{0};
  // Non-cumulative counts per kKernelLatencyBoundsNs bucket, then +Inf.
  std::array<std::atomic<int64_t>, kKernelLatencyBuckets> buckets{};
  void Record(int64_t ns) {
    count.fetch_add(1, std::memory_order_relaxed);
    total_ns.fetch_add(ns, std::memory_order_relaxed);
    size_t bucket = 0;
    while (bucket + 1 < kKernelLatencyBuckets && ns > kKernelLatencyBoundsNs[bucket]) ++bucket;
    buckets[bucket].fetch_add(1, std::memory_order_relaxed);
    int64_t seen = max_ns.load(std::memory_order_relaxed);
    while (ns > seen && !max_ns.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
    }
  }
};

struct NodeRuntime {
  const Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  std::string provider;
  BFCArena* arena = nullptr;       // the provider's device arena; nullptr = the frame's (host)
  std::vector<int> inputs;         // slot per input, -1 when omitted
  std::vector<int> outputs;        // slot per output, -1 when omitted
  std::vector<int> release_after;  // slots whose last reader is this node
  // Enclosing-scope values read by this node's subgraphs (kept alive until it runs).
  std::vector<int> implicit_inputs;
  // (input, output) pairs the kernel may compute in place (from its KernelDef).
  std::vector<std::pair<int, int>> may_inplace;
  std::unique_ptr<NodeStats> stats = std::make_unique<NodeStats>();
  // Compiled bodies of If/Loop/Scan, by attribute name.
  std::map<std::string, std::unique_ptr<ExecutionPlan>> subplans;
};

struct ExecutionPlan {
  std::vector<std::string> slot_names;
  std::map<std::string, int> slot_of;  // value name -> slot
  std::vector<NodeRuntime> nodes;      // in execution order
  std::vector<std::pair<int, Tensor>> constants;
  // Initializers whose bytes were released at creation because every kernel
  // reading them keeps a packed copy (their constants hold type and dims
  // only), and how many bytes that freed.
  int64_t released_constants = 0;
  int64_t released_constant_bytes = 0;
  std::vector<int> feed_slots;  // graph inputs, in declared order
  std::vector<std::string> feed_names;
  std::vector<int> output_slots;  // graph outputs, in declared order
  std::vector<std::string> output_names;
  // Values of enclosing graphs this (sub)graph reads: (own slot, parent slot).
  std::vector<std::pair<int, int>> outer_scope;

  // Parallel execution (empty for a single lane): lane_nodes[l] lists the node
  // positions lane l runs, in order; lane_provider[l] is "" for CPU lanes.
  std::vector<std::vector<int>> lane_nodes;
  std::vector<std::string> lane_provider;
  std::vector<int> cross_lane_producers;               // per node: producers on other lanes
  std::vector<std::vector<int>> cross_lane_consumers;  // per node: consumers on other lanes
  std::vector<int> readers;                            // per slot: reading nodes; -1 = never released

  // Threads for data-parallel kernels of this session's nodes; 0 = the
  // process default (subgraph plans inherit their parent's).
  int intra_op_threads = 0;

  int num_slots() const { return static_cast<int>(slot_names.size()); }
};

}  // namespace onyx
