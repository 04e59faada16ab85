// InferenceSession: one compiled ONNX model, ready to Run.
//
//   onyx::SessionOptions options;
//   options.providers = {"cpu"};
//   ASSIGN_OR_RETURN(auto session, onyx::InferenceSession::Create("model.onnx", options));
//   onyx::Feeds feeds = {{"input", onyx::Value(input_tensor)}};
//   ASSIGN_OR_RETURN(std::vector<onyx::Value> outputs,
//                    session->Run(onyx::RunOptions(), feeds, {"probabilities"}));
//
// Create() does all the expensive work once: parse, check, shape inference,
// graph rewriting, partitioning over the providers, kernel creation and planning.
// Run() only executes. Errors are absl::Status values naming the model, node or
// input concerned; nothing throws and no input aborts the process.
// Thread-safe: Run() may be called concurrently from many threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "onyx/cpu_quota.h"
#include "onyx/run_options.h"
#include "onyx/session_options.h"
#include "onyx/session_stats.h"
#include "onyx/tensor.h"
#include "onyx/value_info.h"

namespace onyx {

using Feeds = std::vector<std::pair<std::string, Value>>;

class InferenceSession {
 public:
  static absl::StatusOr<std::unique_ptr<InferenceSession>> Create(const std::string& model_path,
                                                                  const SessionOptions& options);
  static absl::StatusOr<std::unique_ptr<InferenceSession>> CreateFromBytes(std::string_view model_bytes,
                                                                           const SessionOptions& options);
  ~InferenceSession();

  // Runs the model. Every graph input without an initializer must be fed once;
  // `output_names` empty means all graph outputs, in graph order. Returns the
  // outputs in the order requested. INVALID_ARGUMENT names a missing, unknown,
  // mistyped or misshaped feed; CANCELLED when RunOptions::terminate was set.
  absl::StatusOr<std::vector<Value>> Run(const RunOptions& options, const Feeds& feeds,
                                         const std::vector<std::string>& output_names) const;

  // IOBinding: like Run, but outputs[i] may hold a tensor of caller memory
  // (Tensor::Wrap) with the output's exact type and shape; the kernel then
  // writes straight into it (no copy when the producing kernel allocates its
  // output). Unbound entries (empty Values) are filled as by Run. Feeds are
  // never copied in either form. INVALID_ARGUMENT names a bound output whose
  // type or shape does not match what the model produced.
  absl::Status RunWithBoundOutputs(const RunOptions& options, const Feeds& feeds,
                                   const std::vector<std::string>& output_names, std::vector<Value>& outputs) const;

  // Per-node latency of the main graph, in execution order.
  std::vector<KernelStats> kernel_stats() const;
  // The same, summed per (op type, provider); `node` is empty, max_ns the
  // largest single-node time. Ordered by op type.
  std::vector<KernelStats> op_type_stats() const;
  // Profiling is an observation, not a change of the model: these are const
  // and thread-safe like Run().
  // Profiles the next `runs` runs (on top of enable_profiling); 0 stops a
  // pending count. A non-empty `file_prefix` replaces
  // SessionOptions::profile_file_prefix for the files written from now on.
  void StartProfiling(int64_t runs, const std::string& file_prefix = "") const;
  // Runs fully recorded since the last EndProfiling() (each has one "run" event).
  int64_t profiled_runs() const;
  // Writes the events recorded so far as a Chrome trace and returns its path.
  absl::StatusOr<std::string> EndProfiling() const;

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const PartitionReport& partition_report() const;
  MemoryPlanInfo memory_plan_info() const;
  // op_type -> node count of the graph after rewriting.
  const std::map<std::string, int64_t>& op_histogram() const;

  class Impl;

 private:
  static absl::StatusOr<std::unique_ptr<InferenceSession>> CreateImpl(const std::string& model_path,
                                                                      std::string_view model_bytes,
                                                                      const SessionOptions& options);
  explicit InferenceSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace onyx
