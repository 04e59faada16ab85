#include "common/cpu_quota.h"

#include <sched.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "onyx/cpu_quota.h"

namespace onyx {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

double CgroupQuota() {
  std::string v2 = ReadFile("/sys/fs/cgroup/cpu.max");
  if (!v2.empty()) return ParseCgroupCpuMax(v2.c_str());
  std::string quota = ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  std::string period = ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  if (quota.empty() || period.empty()) return 0;
  double q = std::atof(quota.c_str());
  double p = std::atof(period.c_str());
  return (q > 0 && p > 0) ? q / p : 0;
}

}  // namespace

double ParseCgroupCpuMax(const char* text) {
  char quota[32] = {0};
  double period = 0;
  if (std::sscanf(text, "%31s %lf", quota, &period) != 2) return 0;
  if (std::strcmp(quota, "max") == 0 || period <= 0) return 0;
  double q = std::atof(quota);
  return q > 0 ? q / period : 0;
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
