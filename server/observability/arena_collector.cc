#include "server/observability/arena_collector.h"

#include <string>
#include <utility>

#include "onyx/memory.h"
#include "server/observability/collector_util.h"

namespace onyx::server {

std::pair<std::string, std::string> SplitArenaGroup(const std::string& group) {
  const size_t slash = group.rfind('/');
  if (slash == std::string::npos) return {group, ""};
  return {group.substr(0, slash), group.substr(slash + 1)};
}

std::vector<prometheus::MetricFamily> ArenaCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families = {
      MakeFamily("onyx_arena_in_use_bytes", "Bytes of the arena held by live tensors",
                 MetricType::Gauge),
      MakeFamily("onyx_arena_reserved_bytes", "Bytes the arena obtained from the device allocator",
                 MetricType::Gauge),
      MakeFamily("onyx_arena_peak_in_use_bytes", "Largest in-use byte count of the arena",
                 MetricType::Gauge),
      MakeFamily("onyx_arena_largest_free_block_bytes", "Largest free chunk of the arena",
                 MetricType::Gauge),
      MakeFamily("onyx_arena_allocations_total", "Allocations served by the arena",
                 MetricType::Counter),
      MakeFamily("onyx_arena_extends_total", "Regions the arena obtained from the device allocator",
                 MetricType::Counter),
      MakeFamily("onyx_arena_bin_chunks",
                 "Chunks of the arena per size-class bin (at least bin_min_bytes), in use or free",
                 MetricType::Gauge),
  };
  for (const onyx::ArenaStats& s : onyx::GetArenaStats()) {
    const auto [model, version] = SplitArenaGroup(s.group);
    const std::vector<prometheus::ClientMetric::Label> labels = {
        {"device", s.device}, {"model", model}, {"version", version}};
    auto bin = [&labels](const std::string& min_bytes, const char* state) {
      std::vector<prometheus::ClientMetric::Label> out = labels;
      out.push_back({"bin_min_bytes", min_bytes});
      out.push_back({"state", state});
      return out;
    };
    AddSample(families[0], labels, static_cast<double>(s.in_use_bytes));
    AddSample(families[1], labels, static_cast<double>(s.reserved_bytes));
    AddSample(families[2], labels, static_cast<double>(s.peak_in_use_bytes));
    AddSample(families[3], labels, static_cast<double>(s.largest_free_block));
    AddSample(families[4], labels, static_cast<double>(s.allocations));
    AddSample(families[5], labels, static_cast<double>(s.extends));
    for (size_t b = 0; b < s.bin_chunks_in_use.size() && b < s.bin_chunks_free.size(); ++b) {
      const std::string min_bytes = std::to_string(onyx::kArenaMinChunkBytes << b);
      AddSample(families[6], bin(min_bytes, "in_use"), static_cast<double>(s.bin_chunks_in_use[b]));
      AddSample(families[6], bin(min_bytes, "free"), static_cast<double>(s.bin_chunks_free[b]));
    }
  }
  return families;
}

}  // namespace onyx::server
