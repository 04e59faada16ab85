#include "server/observability/process_collector.h"

#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "server/observability/collector_util.h"

namespace onyx::server {
namespace {

std::string Compiler() {
#if defined(__clang__)
  return absl::StrCat("clang ", __clang_major__, ".", __clang_minor__, ".", __clang_patchlevel__);
#elif defined(__GNUC__)
  return absl::StrCat("gcc ", __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

}  // namespace

absl::StatusOr<int64_t> ResidentMemoryBytes() {
  // statm: total program size, then resident pages.
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) {
    return absl::InternalError("cannot read the resident set size from /proc/self/statm");
  }
  return resident_pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

ProcessCollector::ProcessCollector(std::string version) : version_(std::move(version)) {}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  absl::StatusOr<int64_t> rss = ResidentMemoryBytes();
  if (rss.ok()) {
    families.push_back(MakeFamily("onyx_process_resident_memory_bytes",
                                  "Resident set size of the onyxd process", MetricType::Gauge));
    AddSample(families.back(), {}, static_cast<double>(*rss));
  }
  families.push_back(MakeFamily("onyx_build_info", "Build of this onyxd (labels); always 1", MetricType::Gauge));
  AddSample(families.back(),
            {{"version", version_}, {"compiler", Compiler()}, {"cxx_standard", std::to_string(__cplusplus)}}, 1);
  return families;
}

}  // namespace onyx::server
