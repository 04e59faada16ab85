// What a compiled session reports about itself: its partition over the
// providers (with every CPU fallback), its memory plan, and per-node kernel
// latency statistics. Plain data; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace onyx {

// What memory planning achieved for the most recent learned pattern.
struct MemoryPlanInfo {
  int64_t patterns = 0;             // patterns cached
  int64_t planned_bytes = 0;        // one block holding every planned intermediate
  int64_t without_reuse_bytes = 0;  // the same buffers without any reuse
  // Weights whose plain bytes were freed at creation: every kernel reading
  // them keeps a packed copy of its own (not in a shared-weights group).
  int64_t released_constants = 0;
  int64_t released_constant_bytes = 0;
};

struct FallbackNode {
  std::string node;  // node name (or "<op_type>#<index>" when unnamed)
  std::string op_type;
  std::string provider;  // the preferred provider that declined it
  std::string reason;    // the kernel registry's explanation
};

// How the graph was split over the providers.
struct PartitionReport {
  std::map<std::string, int64_t> nodes_per_provider;
  int64_t partitions = 0;    // maximal runs of consecutive nodes on one provider
  int64_t memcpy_nodes = 0;  // copies inserted at device boundaries
  std::vector<FallbackNode> fallback_nodes;
  // Listed providers this host could not create (SessionOptions::
  // require_providers off), with why; their nodes are in fallback_nodes.
  std::map<std::string, std::string> unavailable_providers;
  std::string ToString() const;
};

// Upper bounds (ns) of the kernel latency histogram every node keeps: 1 µs to
// 1 s, roughly 1-2.5-5 per decade. KernelStats::bucket_counts has one count per
// bound plus a last one for slower runs (+Inf).
inline constexpr int64_t kKernelLatencyBoundsNs[] = {1'000,       2'500,       5'000,       10'000,       25'000,
                                                     50'000,      100'000,     250'000,     500'000,      1'000'000,
                                                     2'500'000,   5'000'000,   10'000'000,  25'000'000,   50'000'000,
                                                     100'000'000, 250'000'000, 500'000'000, 1'000'000'000};
inline constexpr size_t kKernelLatencyBuckets = std::size(kKernelLatencyBoundsNs) + 1;

// Latency of one node of the main graph over all runs of a session. Counted
// always (relaxed atomics, no lock or allocation per run).
struct KernelStats {
  std::string node;  // node label, e.g. "Conv 'conv1'"
  std::string op_type;
  std::string provider;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
  // Runs per latency bucket (not cumulative): runs with time <=
  // kKernelLatencyBoundsNs[i] and above the previous bound; the last is +Inf.
  std::vector<int64_t> bucket_counts = std::vector<int64_t>(kKernelLatencyBuckets, 0);
};

// Adds k's runs (count, total, max, buckets) to `sum`; the labels of `sum`
// are left as they are.
void AddKernelStats(KernelStats& sum, const KernelStats& k);

}  // namespace onyx
