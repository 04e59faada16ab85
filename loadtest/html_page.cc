#include "loadtest/html_page.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "loadtest/svg_chart.h"

namespace onyx::load {

const std::vector<std::string> kPalette = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                           "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string PageStart(const std::string& title) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      // Nothing may be fetched and nothing may run: the report is one file.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:\">\n<title>",
      HtmlEscape(title),
      "</title>\n<style>\n"
      "body{font-family:sans-serif;margin:20px;color:#222;max-width:1100px}\n"
      "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
      "table{border-collapse:collapse;font-size:13px;margin:8px 0}\n"
      "td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f3f3f3}\n"
      "td.l,th.l{text-align:left}\n"
      ".ok{color:#2a7d2a}.bad{color:#c0392b;font-weight:bold}\n"
      "svg.chart{display:block;margin:6px 0;font-size:11px;background:#fff}\n"
      "svg .plot{fill:#fcfcfc;stroke:#999}svg .grid{stroke:#e4e4e4}svg .title{font-size:14px;font-weight:bold}\n"
      "svg .label{font-size:12px;fill:#444}svg .tick{fill:#555}svg .nodata{fill:#999;font-size:14px}\n"
      "svg .legend{font-size:11px}\n"
      "</style>\n</head>\n<body>\n");
}

std::string PageEnd() { return "</body>\n</html>\n"; }

std::vector<std::pair<double, double>> PercentileCurve(const HistogramData& d) {
  std::vector<std::pair<double, double>> out;
  if (d.count == 0) return out;
  const Histogram h = d.Build();
  const double max_nines = std::log10(static_cast<double>(d.count));
  for (double nines = 0; nines <= max_nines + 1e-9; nines += 0.05) {
    const double q = 1 - std::pow(10, -nines);
    out.emplace_back(nines, static_cast<double>(h.Percentile(q)));
  }
  out.emplace_back(max_nines + 0.05, static_cast<double>(d.max));
  return out;
}

std::vector<std::pair<double, std::string>> NinesTicks(double nines) {
  std::vector<std::pair<double, std::string>> t = {{0, "p0"}};
  std::string label = "p9";
  for (int k = 1; k <= std::ceil(nines) && k <= 7; ++k) {
    t.emplace_back(k, k == 1 ? "p90" : k == 2 ? "p99" : absl::StrCat("p99.", std::string(k - 2, '9')));
  }
  return t;
}

}  // namespace onyx::load
