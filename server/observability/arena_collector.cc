#include "server/observability/arena_collector.h"

#include <string>

#include "onyx/memory.h"

namespace onyx::server {
namespace {

prometheus::MetricFamily Family(const char* name, const char* help, prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  return family;
}

void Add(prometheus::MetricFamily& family, const std::string& device, double value) {
  prometheus::ClientMetric metric;
  metric.label.push_back({"device", device});
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

}  // namespace

std::vector<prometheus::MetricFamily> ArenaCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families = {
      Family("onyx_arena_in_use_bytes", "Bytes of the device arena held by live tensors", MetricType::Gauge),
      Family("onyx_arena_reserved_bytes", "Bytes the device arena obtained from the device allocator",
             MetricType::Gauge),
      Family("onyx_arena_peak_in_use_bytes", "Largest in-use byte count of the device arena", MetricType::Gauge),
      Family("onyx_arena_largest_free_block_bytes", "Largest free chunk of the device arena", MetricType::Gauge),
      Family("onyx_arena_allocations_total", "Allocations served by the device arena", MetricType::Counter),
      Family("onyx_arena_extends_total", "Regions the device arena obtained from the device allocator",
             MetricType::Counter),
  };
  for (const onyx::ArenaStats& s : onyx::GetArenaStats()) {
    Add(families[0], s.device, static_cast<double>(s.in_use_bytes));
    Add(families[1], s.device, static_cast<double>(s.reserved_bytes));
    Add(families[2], s.device, static_cast<double>(s.peak_in_use_bytes));
    Add(families[3], s.device, static_cast<double>(s.largest_free_block));
    Add(families[4], s.device, static_cast<double>(s.allocations));
    Add(families[5], s.device, static_cast<double>(s.extends));
  }
  return families;
}

}  // namespace onyx::server
