#include "loadtest/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loadtest/units.h"

namespace onyx::load {
namespace {

constexpr int kLeft = 70, kRight = 150, kTop = 34, kBottom = 44;  // plot margins (legend on the right)

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double Map(double v, double a, double b) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return a + (b - a) * t;
  }
};

// "Nice" linear ticks (1, 2, 5 x 10^k) or powers of ten.
std::vector<double> Ticks(const Axis& a) {
  std::vector<double> out;
  if (a.log) {
    for (double p = std::pow(10, std::floor(std::log10(a.lo))); p <= a.hi * 1.0001; p *= 10) {
      if (p >= a.lo * 0.9999) out.push_back(p);
    }
    if (out.size() < 2) out = {a.lo, a.hi};
    return out;
  }
  const double span = a.hi - a.lo;
  const double raw = span / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  for (double v = std::ceil(a.lo / step) * step; v <= a.hi + step * 1e-6; v += step) out.push_back(v);
  return out;
}

Axis FitAxis(double lo, double hi, bool log, bool from_zero) {
  Axis a;
  a.log = log;
  if (!(lo <= hi)) lo = hi = log ? 1 : 0;
  if (log) {
    lo = std::max(lo, 1e-12);
    hi = std::max(hi, lo);
    a.lo = std::pow(10, std::floor(std::log10(lo)));
    a.hi = std::pow(10, std::ceil(std::log10(hi)));
    if (a.hi <= a.lo) a.hi = a.lo * 10;
    return a;
  }
  if (from_zero) lo = std::min(lo, 0.0);
  if (hi == lo) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
  const double pad = (hi - lo) * 0.05;
  a.lo = from_zero && lo >= 0 ? lo : lo - pad;
  a.hi = hi + pad;
  return a;
}

std::string Plain(double v) { return absl::StrFormat("%g", v); }

std::string Frame(const ChartSpec& spec, const Axis& x, const Axis& y, std::string* out) {
  const int w = spec.width, h = spec.height;
  absl::StrAppendFormat(out,
                        "<svg class=\"chart\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                        "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
                        spec.id, w, h, w, h, HtmlEscape(spec.title));
  absl::StrAppendFormat(out, "<text class=\"title\" x=\"%d\" y=\"20\">%s</text>\n", kLeft, HtmlEscape(spec.title));
  const double x0 = kLeft, x1 = w - kRight, y0 = h - kBottom, y1 = kTop;
  absl::StrAppendFormat(out, "<rect class=\"plot\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"/>\n", x0, y1, x1 - x0,
                        y0 - y1);
  const auto xf = spec.x_format ? spec.x_format : Plain;
  const auto yf = spec.y_format ? spec.y_format : Plain;
  std::vector<std::pair<double, std::string>> xt = spec.x_ticks;
  if (xt.empty()) {
    for (double v : Ticks(x)) xt.emplace_back(v, xf(v));
  }
  for (const auto& [v, label] : xt) {
    if (v < x.lo || v > x.hi) continue;
    const double px = x.Map(v, x0, x1);
    absl::StrAppendFormat(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\"/>", px, y0, px, y1);
    absl::StrAppendFormat(out, "<text class=\"tick\" x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", px,
                          y0 + 16, HtmlEscape(label));
  }
  for (double v : Ticks(y)) {
    const double py = y.Map(v, y0, y1);
    absl::StrAppendFormat(out, "<line class=\"grid\" x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>", x0, py, x1, py);
    absl::StrAppendFormat(out, "<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", x0 - 6,
                          py + 4, HtmlEscape(yf(v)));
  }
  absl::StrAppendFormat(out, "<text class=\"label\" x=\"%g\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                        (x0 + x1) / 2, h - 8, HtmlEscape(spec.x_label));
  absl::StrAppendFormat(out,
                        "<text class=\"label\" x=\"14\" y=\"%g\" text-anchor=\"middle\" "
                        "transform=\"rotate(-90 14 %g)\">%s</text>\n",
                        (y0 + y1) / 2, (y0 + y1) / 2, HtmlEscape(spec.y_label));
  return "";
}

void NoData(const ChartSpec& spec, std::string* out) {
  absl::StrAppendFormat(out, "<text class=\"nodata\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">no data</text>\n",
                        (kLeft + spec.width - kRight) / 2, spec.height / 2);
}

bool Usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

}  // namespace

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string FormatNsTick(double ns) { return FormatNs(ns); }
std::string FormatCountTick(double v) { return FormatCount(v); }
std::string FormatBytesTick(double v) {
  if (v >= 1 << 30) return absl::StrFormat("%.3gGiB", v / (1 << 30));
  if (v >= 1 << 20) return absl::StrFormat("%.3gMiB", v / (1 << 20));
  if (v >= 1 << 10) return absl::StrFormat("%.3gKiB", v / (1 << 10));
  return absl::StrFormat("%gB", v);
}

std::string LineChart(const ChartSpec& spec, const std::vector<ChartSeries>& series) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const ChartSeries& s : series) {
    for (const auto& [x, y] : s.points) {
      if (!Usable(x, spec.log_x) || !Usable(y, spec.log_y)) continue;
      xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  }
  for (const auto& [v, label] : spec.x_ticks) xlo = std::min(xlo, v), xhi = std::max(xhi, v);
  std::string out;
  const bool empty = !(yhi >= ylo);
  const Axis x = FitAxis(xlo, xhi, spec.log_x, false);
  const Axis y = FitAxis(ylo, yhi, spec.log_y, spec.y_from_zero);
  Frame(spec, x, y, &out);
  if (empty) NoData(spec, &out);
  const double x0 = kLeft, x1 = spec.width - kRight, y0 = spec.height - kBottom, y1 = kTop;
  int legend = 0;
  for (const ChartSeries& s : series) {
    std::string points;
    int n = 0;
    for (const auto& [px, py] : s.points) {
      if (!Usable(px, spec.log_x) || !Usable(py, spec.log_y)) continue;
      absl::StrAppendFormat(&points, "%.1f,%.1f ", x.Map(px, x0, x1), y.Map(py, y0, y1));
      ++n;
    }
    absl::StrAppendFormat(&out,
                          "<polyline class=\"series\" data-series=\"%s\" data-points=\"%d\" fill=\"none\" "
                          "stroke=\"%s\" stroke-width=\"1.8\"%s points=\"%s\"/>\n",
                          HtmlEscape(s.name), n, s.color, s.dashed ? " stroke-dasharray=\"6 4\"" : "", points);
    if (s.markers) {
      for (const auto& [px, py] : s.points) {
        if (!Usable(px, spec.log_x) || !Usable(py, spec.log_y)) continue;
        absl::StrAppendFormat(&out, "<circle class=\"marker\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>",
                              x.Map(px, x0, x1), y.Map(py, y0, y1), s.color);
      }
      out += "\n";
    }
    const int ly = kTop + 8 + 18 * legend++;
    absl::StrAppendFormat(&out,
                          "<line x1=\"%g\" y1=\"%d\" x2=\"%g\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"%s/>"
                          "<text class=\"legend\" x=\"%g\" y=\"%d\">%s</text>\n",
                          x1 + 10, ly, x1 + 30, ly, s.color, s.dashed ? " stroke-dasharray=\"6 4\"" : "", x1 + 36,
                          ly + 4, HtmlEscape(s.name));
  }
  out += "</svg>\n";
  return out;
}

std::string BarChart(const ChartSpec& spec, const std::string& color, const std::vector<Bar>& bars) {
  double xlo = INFINITY, xhi = -INFINITY, yhi = 0;
  for (const Bar& b : bars) {
    if (!Usable(b.x0, spec.log_x) || !Usable(b.x1, spec.log_x)) continue;
    xlo = std::min(xlo, b.x0), xhi = std::max(xhi, b.x1), yhi = std::max(yhi, b.height);
  }
  std::string out;
  const Axis x = FitAxis(xlo, xhi, spec.log_x, false);
  const Axis y = FitAxis(0, yhi, false, true);
  Frame(spec, x, y, &out);
  if (bars.empty()) NoData(spec, &out);
  const double x0 = kLeft, x1 = spec.width - kRight, y0 = spec.height - kBottom, y1 = kTop;
  absl::StrAppendFormat(&out, "<g class=\"bars\" data-series=\"bars\" data-points=\"%d\" fill=\"%s\">\n", bars.size(),
                        color);
  for (const Bar& b : bars) {
    if (!Usable(b.x0, spec.log_x) || !Usable(b.x1, spec.log_x)) continue;
    const double a = x.Map(b.x0, x0, x1), c = x.Map(b.x1, x0, x1), top = y.Map(b.height, y0, y1);
    absl::StrAppendFormat(&out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", a, top,
                          std::max(0.8, c - a - 0.5), y0 - top);
  }
  out += "\n</g>\n</svg>\n";
  return out;
}

std::string StackedBars(const ChartSpec& spec, const std::vector<StackRow>& rows,
                        const std::vector<std::string>& colors) {
  const int row_h = 26;
  ChartSpec s = spec;
  s.height = kTop + kBottom + row_h * static_cast<int>(std::max<size_t>(rows.size(), 1)) + 10;
  double hi = 0;
  for (const StackRow& r : rows) {
    double sum = 0;
    for (const auto& seg : r.segments) sum += std::max(0.0, seg.second);
    hi = std::max(hi, sum);
  }
  std::string out;
  const Axis x = FitAxis(0, hi, false, true);
  const double x0 = kLeft + 90, x1 = s.width - kRight;
  absl::StrAppendFormat(&out,
                        "<svg class=\"chart\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                        "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
                        s.id, s.width, s.height, s.width, s.height, HtmlEscape(s.title));
  absl::StrAppendFormat(&out, "<text class=\"title\" x=\"%d\" y=\"20\">%s</text>\n", kLeft, HtmlEscape(s.title));
  const auto xf = s.x_format ? s.x_format : Plain;
  const double bottom = s.height - kBottom;
  for (double v : Ticks(x)) {
    const double px = x.Map(v, x0, x1);
    absl::StrAppendFormat(&out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%g\"/>", px, kTop, px,
                          bottom);
    absl::StrAppendFormat(&out, "<text class=\"tick\" x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", px,
                          bottom + 16, HtmlEscape(xf(v)));
  }
  absl::StrAppendFormat(&out, "<text class=\"label\" x=\"%g\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                        (x0 + x1) / 2, s.height - 8, HtmlEscape(s.x_label));
  if (rows.empty()) NoData(s, &out);
  int n = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = kTop + 6 + row_h * static_cast<double>(i);
    absl::StrAppendFormat(&out, "<text class=\"tick\" x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", x0 - 6,
                          y + 14, HtmlEscape(rows[i].label));
    double at = 0;
    for (size_t k = 0; k < rows[i].segments.size(); ++k) {
      const double v = std::max(0.0, rows[i].segments[k].second);
      const double a = x.Map(at, x0, x1), b = x.Map(at + v, x0, x1);
      absl::StrAppendFormat(&out,
                            "<rect class=\"bar\" data-segment=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                            "height=\"18\" fill=\"%s\"><title>%s: %s</title></rect>",
                            HtmlEscape(rows[i].segments[k].first), a, y, std::max(0.0, b - a),
                            colors[k % colors.size()], HtmlEscape(rows[i].segments[k].first), xf(v));
      at += v;
      ++n;
    }
    out += "\n";
  }
  if (!rows.empty()) {
    for (size_t k = 0; k < rows[0].segments.size(); ++k) {
      const int ly = kTop + 8 + 18 * static_cast<int>(k);
      absl::StrAppendFormat(&out,
                            "<rect x=\"%g\" y=\"%d\" width=\"14\" height=\"10\" fill=\"%s\"/>"
                            "<text class=\"legend\" x=\"%g\" y=\"%d\">%s</text>\n",
                            x1 + 10, ly - 5, colors[k % colors.size()], x1 + 30, ly + 4,
                            HtmlEscape(rows[0].segments[k].first));
    }
  }
  absl::StrAppendFormat(&out, "<g class=\"bars\" data-series=\"segments\" data-points=\"%d\"></g>\n</svg>\n", n);
  return out;
}

}  // namespace onyx::load
