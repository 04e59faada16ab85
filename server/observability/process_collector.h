// Prometheus series about the onyxd process itself, read at scrape time.
// Thread-safe.
//
//   onyx_process_resident_memory_bytes   gauge: resident set size (/proc/self/statm)
//   onyx_build_info{version,compiler,cxx_standard}   gauge, always 1
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace onyx::server {

// Resident set size of this process in bytes; INTERNAL when /proc cannot be read.
absl::StatusOr<int64_t> ResidentMemoryBytes();

class ProcessCollector final : public prometheus::Collectable {
 public:
  // `version` is onyx_build_info's version label.
  explicit ProcessCollector(std::string version);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::string version_;
};

}  // namespace onyx::server
