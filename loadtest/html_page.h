// The frame of onyx-load's HTML pages (report and compare): a head whose
// Content-Security-Policy forbids every fetch and every script, inline CSS,
// and the chart helpers both pages share.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "loadtest/result.h"

namespace onyx::load {

std::string PageStart(const std::string& title);
std::string PageEnd();

// (nines, latency ns) along a histogram's percentile curve: x = -log10(1 - q)
// so p90, p99, p99.9 sit one unit apart; as far into the tail as the sample
// count supports.
std::vector<std::pair<double, double>> PercentileCurve(const HistogramData& h);
// Fixed ticks for that axis: p0, p90, p99, ... up to `nines`.
std::vector<std::pair<double, std::string>> NinesTicks(double nines);

extern const std::vector<std::string> kPalette;

}  // namespace onyx::load
