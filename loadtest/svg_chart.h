// Inline SVG charts for the HTML reports: line charts (linear or log axes)
// and bar charts, as markup to paste into a page. No script, no external
// resource: a chart is drawn entirely by the browser's SVG renderer.
//
//   ChartSpec spec{"latency", "Latency over time", "time (s)", "latency"};
//   spec.log_y = true;  spec.y_format = FormatNsTick;
//   std::string svg = LineChart(spec, {{"p99", "#d62728", points}});
//
// Every data series is a <polyline class="series" data-series=NAME
// data-points=N> (bars: <rect class="bar">), so a test can check that a
// chart drew its data. Pure functions; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace onyx::load {

struct ChartSeries {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite points are skipped
  bool dashed = false;
  bool markers = false;  // a dot on every point (sweeps: each point is a level)
};

struct ChartSpec {
  std::string id, title, x_label, y_label;
  bool log_x = false, log_y = false;
  std::function<std::string(double)> x_format = {}, y_format = {};  // tick labels; default: plain numbers
  std::vector<std::pair<double, std::string>> x_ticks = {};         // fixed ticks instead of computed ones
  bool y_from_zero = true;                                          // linear y axis starts at 0
  int width = 760, height = 300;
};

std::string LineChart(const ChartSpec& spec, const std::vector<ChartSeries>& series);

struct Bar {
  double x0, x1, height;
};
std::string BarChart(const ChartSpec& spec, const std::string& color, const std::vector<Bar>& bars);

// Horizontal stacked bars: one row per label, segments left to right.
struct StackRow {
  std::string label;
  std::vector<std::pair<std::string, double>> segments;  // (name, value); colours by segment index
};
std::string StackedBars(const ChartSpec& spec, const std::vector<StackRow>& rows,
                        const std::vector<std::string>& colors);

std::string HtmlEscape(const std::string& s);
std::string FormatNsTick(double ns);
std::string FormatCountTick(double v);
std::string FormatBytesTick(double v);

}  // namespace onyx::load
