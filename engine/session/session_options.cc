#include "onyx/session_options.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

}  // namespace onyx
