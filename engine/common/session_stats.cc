#include "onyx/session_stats.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace onyx {

std::string PartitionReport::ToString() const {
  std::string out = "partition report:\n";
  for (const auto& [provider, count] : nodes_per_provider) {
    absl::StrAppend(&out, "  provider ", provider, ": ", count, " nodes\n");
  }
  for (const auto& [provider, reason] : unavailable_providers) {
    absl::StrAppend(&out, "  provider ", provider, " unavailable: ", reason, "\n");
  }
  absl::StrAppend(&out, "  partitions: ", partitions, "\n  memcpy nodes: ", memcpy_nodes,
                  "\n  cpu fallback nodes: ", fallback_nodes.size(), "\n");
  for (const auto& f : fallback_nodes) {
    absl::StrAppend(&out, "    ", f.op_type, " '", f.node, "' declined by ", f.provider, ": ", f.reason, "\n");
  }
  return out;
}

void AddKernelStats(KernelStats& sum, const KernelStats& k) {
  sum.count += k.count;
  sum.total_ns += k.total_ns;
  sum.max_ns = std::max(sum.max_ns, k.max_ns);
  for (size_t b = 0; b < sum.bucket_counts.size() && b < k.bucket_counts.size(); ++b) {
    sum.bucket_counts[b] += k.bucket_counts[b];
  }
}

}  // namespace onyx
