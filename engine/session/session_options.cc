#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cpu_quota.h"
#include "onyx/session.h"

namespace onyx {

absl::StatusOr<OptimizationLevel> ParseOptimizationLevel(std::string_view text) {
  if (text == "disabled") return OptimizationLevel::kDisabled;
  if (text == "basic") return OptimizationLevel::kBasic;
  if (text == "extended") return OptimizationLevel::kExtended;
  if (text == "all") return OptimizationLevel::kAll;
  return absl::InvalidArgumentError(absl::StrCat("optimization level must be one of disabled, basic, ",
                                                 "extended, all; received '", std::string(text), "'"));
}

const char* OptimizationLevelName(OptimizationLevel level) {
  switch (level) {
    case OptimizationLevel::kDisabled: return "disabled";
    case OptimizationLevel::kBasic: return "basic";
    case OptimizationLevel::kExtended: return "extended";
    case OptimizationLevel::kAll: return "all";
  }
  return "all";
}

int ProcessCpuQuota() { return AvailableCpuCount(); }

std::string PartitionReport::ToString() const {
  std::string out = "partition report:\n";
  for (const auto& [provider, count] : nodes_per_provider) {
    absl::StrAppend(&out, "  provider ", provider, ": ", count, " nodes\n");
  }
  absl::StrAppend(&out, "  partitions: ", partitions, "\n  memcpy nodes: ", memcpy_nodes,
                  "\n  cpu fallback nodes: ", fallback_nodes.size(), "\n");
  for (const auto& f : fallback_nodes) {
    absl::StrAppend(&out, "    ", f.op_type, " '", f.node, "' declined by ", f.provider, ": ", f.reason, "\n");
  }
  return out;
}

}  // namespace onyx
