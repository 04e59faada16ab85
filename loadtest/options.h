// onyx-load's configuration: every command-line flag, parsed and checked.
//
//   ASSIGN_OR_RETURN(Options options, ParseFlags(args));   // args without argv[0]
//
// ParseFlags returns INVALID_ARGUMENT naming the flag, what it expects and
// the text received; `onyx-load --help` prints UsageText(). Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "loadtest/criteria.h"
#include "loadtest/sweep.h"

namespace onyx::load {

struct ModelSpec {
  std::string name;
  std::string version;  // "" = the server's choice
  double weight = 1;
};

// --shape [MODEL:]INPUT=D1,D2,...
struct ShapeOverride {
  std::string model;  // "" = every model
  std::string input;
  std::vector<int64_t> dims;
};

// --input-data [MODEL=]SOURCE
struct DataSource {
  std::string model;   // "" = every model
  std::string source;  // "random", "zeros", a directory of .pb/.npy files, or a JSON file
};

struct Options {
  std::vector<std::string> targets;  // HOST:PORT of each replica
  std::vector<ModelSpec> models;
  bool empty_call = false;  // ServerLive instead of ModelInfer

  // Load: closed loop (concurrency) or open loop (rate); each may sweep.
  std::vector<double> concurrency;  // levels; empty = open loop
  std::vector<double> rate;         // levels (open loop)
  bool poisson = false;
  uint64_t seed = 1;
  int64_t max_inflight = 0;  // 0: no ceiling
  bool drop_overflow = false;
  double duration_s = 10;
  int64_t requests = 0;  // per level; 0 = use duration
  double warmup_s = 1;
  Ramp ramp;
  bool find_max = false;
  std::vector<Criterion> slo;
  double find_max_precision = 0.05;
  int threads = 1;
  int connections = 1;
  bool streaming = false;
  double timeout_s = 0;  // 0: no per-request deadline
  double drain_timeout_s = 30;
  double connect_timeout_s = 10;

  // Inputs.
  int64_t batch = 1;
  std::vector<ShapeOverride> shapes;
  std::vector<DataSource> data;
  bool typed_encoding = false;
  bool shm_system = false;
  bool validate = false;

  // Server side.
  std::vector<std::string> metrics_urls;
  bool server_stats = true;
  double scrape_interval_s = 1;

  // Reports and gates.
  std::vector<double> percentiles = {0.5, 0.9, 0.95, 0.99, 0.999};
  std::string json_path, csv_path, html_path, trace_path;
  bool quiet = false;
  std::vector<Criterion> asserts;
  double max_late_share = 0.05;

  bool help = false;
  bool version = false;
  // Flags as given, for the report.
  std::vector<std::pair<std::string, std::string>> given;

  bool open_loop() const { return concurrency.empty(); }
};

absl::StatusOr<Options> ParseFlags(const std::vector<std::string>& args);

std::string UsageText();

}  // namespace onyx::load
