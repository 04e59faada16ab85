#include "server/models/version_loader.h"

#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onyx/memory.h"
#include "onyx/session.h"
#include "spdlog/spdlog.h"

namespace onyx::server {
namespace {

// One line for the load log: providers, partitions, Memcpy and CPU fallback.
std::string PartitionSummary(const onyx::PartitionReport& report) {
  std::vector<std::string> providers;
  for (const auto& [provider, nodes] : report.nodes_per_provider) {
    providers.push_back(absl::StrCat(provider, ": ", nodes));
  }
  std::string out = absl::StrCat("nodes {", absl::StrJoin(providers, ", "), "}, ",
                                 report.partitions, " partition(s), ", report.memcpy_nodes,
                                 " Memcpy, ", report.fallback_nodes.size(), " CPU fallback");
  for (const onyx::FallbackNode& node : report.fallback_nodes) {
    absl::StrAppend(&out, " [", node.op_type, " '", node.node, "' declined by ", node.provider,
                    "]");
  }
  return out;
}

// The version's own arenas (group "<model>/<version>", see Model::Load).
std::string ArenaSummary(const std::string& group) {
  std::vector<std::string> arenas;
  for (const onyx::ArenaStats& a : onyx::GetArenaStats()) {
    if (a.group != group) continue;
    arenas.push_back(absl::StrCat(a.device, ": in use ", a.in_use_bytes, " B, peak ",
                                  a.peak_in_use_bytes, " B, reserved ", a.reserved_bytes,
                                  " B, largest free block ", a.largest_free_block, " B"));
  }
  return absl::StrJoin(arenas, "; ");
}

std::string SessionLabels(const BucketSessions& sessions) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < sessions.size(); ++i) labels.push_back(sessions.bucket_label(i));
  return absl::StrJoin(labels, ", ");
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> LoadModelVersion(const Model::Options& options) {
  // With more OpenMP threads than CPUs libgomp stops spinning, and every
  // parallel region of every request pays a thread wake-up (resnet with 1
  // instance x 2 threads: 3.2 ms per request instead of 1.3): the load's
  // team must not outlive the load.
  absl::StatusOr<std::unique_ptr<Model>> model = absl::InternalError("model load did not run");
  try {
    std::thread([&] { model = Model::Load(options); }).join();
  } catch (const std::system_error&) {
    model = Model::Load(options);  // no thread to spare: load here
  }
  const std::string& name = options.name;
  const int64_t version = options.version;
  if (!model.ok()) {
    spdlog::error("model '{}' version {} unavailable: {}", name, version,
                  std::string(model.status().message()));
    return model.status();
  }
  const BucketSessions& sessions = (*model)->sessions();
  const ModelConfig& resolved = (*model)->config();
  spdlog::info(
      "model '{}' version {} ready in {:.3f} s; sessions [{}]; {} instance(s) x {} thread(s); {}; "
      "arena {}",
      name, version, absl::ToDoubleSeconds((*model)->load_duration()), SessionLabels(sessions),
      resolved.instance_count, EffectiveIntraOpThreads(resolved, onyx::ProcessCpuQuota()),
      PartitionSummary(sessions.session(0).partition_report()),
      ArenaSummary(absl::StrCat(name, "/", version)));
  return std::shared_ptr<const Model>(std::move(*model));
}

}  // namespace onyx::server
