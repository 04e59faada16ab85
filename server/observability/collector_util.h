// Helpers for prometheus::Collectable implementations that build their
// families at scrape time (arena, process, model collectors).
// Stateless; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"

namespace onyx::server {

inline prometheus::MetricFamily MakeFamily(std::string name, std::string help,
                                           prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

// Appends one sample to a gauge or counter family (by the family's type).
inline void AddSample(prometheus::MetricFamily& family, std::vector<prometheus::ClientMetric::Label> labels,
                      double value) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

}  // namespace onyx::server
