#include "common/cpu_quota.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/logging.h"

#include "onyx/cpu_quota.h"

namespace onyx {
namespace {

constexpr char kCpuMaxPath[] = "/sys/fs/cgroup/cpu.max";
constexpr char kCfsQuotaPath[] = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us";
constexpr char kCfsPeriodPath[] = "/sys/fs/cgroup/cpu/cpu.cfs_period_us";

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The quota in CPUs, 0 when there is none or the files cannot be read or parsed.
double CgroupQuota() {
  absl::StatusOr<double> quota = 0.0;
  std::string v2 = ReadFile(kCpuMaxPath);
  if (!v2.empty()) {
    quota = ParseCgroupCpuMax(v2);
  } else {
    std::string v1_quota = ReadFile(kCfsQuotaPath);
    std::string v1_period = ReadFile(kCfsPeriodPath);
    if (!v1_quota.empty() && !v1_period.empty()) quota = ParseCgroupV1Quota(v1_quota, v1_period);
  }
  if (!quota.ok()) {
    EngineLogger()->warn("ignoring the cgroup CPU quota: {}", std::string(quota.status().message()));
    return 0;
  }
  return *quota;
}

}  // namespace

absl::StatusOr<double> ParseCgroupCpuMax(absl::string_view text) {
  std::vector<absl::string_view> fields = absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  int64_t quota = 0;
  int64_t period = 0;
  const bool unlimited = fields.size() == 2 && fields[0] == "max";
  if (fields.size() != 2 || (!unlimited && (!absl::SimpleAtoi(fields[0], &quota) || quota <= 0)) ||
      !absl::SimpleAtoi(fields[1], &period) || period <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(kCpuMaxPath,
                                                   ": expected '<positive quota or max> <positive period>', received '",
                                                   absl::StripAsciiWhitespace(text), "'"));
  }
  return unlimited ? 0.0 : static_cast<double>(quota) / static_cast<double>(period);
}

absl::StatusOr<double> ParseCgroupV1Quota(absl::string_view quota_text, absl::string_view period_text) {
  int64_t quota = 0;
  int64_t period = 0;
  if (!absl::SimpleAtoi(quota_text, &quota) || quota == 0 || quota < -1) {
    return absl::InvalidArgumentError(absl::StrCat(kCfsQuotaPath, ": expected a positive integer or -1, received '",
                                                   absl::StripAsciiWhitespace(quota_text), "'"));
  }
  if (!absl::SimpleAtoi(period_text, &period) || period <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(kCfsPeriodPath, ": expected a positive integer, received '",
                                                   absl::StripAsciiWhitespace(period_text), "'"));
  }
  return quota < 0 ? 0.0 : static_cast<double>(quota) / static_cast<double>(period);
}

int AvailableCpuCount() {
  int count = 1;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) count = CPU_COUNT(&set);
  double quota = CgroupQuota();
  if (quota > 0) count = std::min(count, static_cast<int>(std::ceil(quota)));
  return std::max(count, 1);
}

int ProcessCpuQuota() { return AvailableCpuCount(); }

}  // namespace onyx
