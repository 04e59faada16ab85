// AdminService: onyx.admin.v1.Admin (proto/admin.proto) on the main gRPC port —
// operator calls that are not part of the KServe v2 protocol.
//
//   AdminService::Options options;
//   options.repository = repository.get();
//   options.profile_directory = "/tmp/onyx-profiles";
//   ASSIGN_OR_RETURN(auto admin, AdminService::Create(options));
//   builder.RegisterService(admin.get());
//
// ProfileModel switches Chrome-trace profiling on for the next N engine runs
// of one model version (every bucket session), waits on one of
// kProfileThreads threads (the gRPC handler returns at once; more than
// kMaxQueuedProfiles waiting calls are RESOURCE_EXHAUSTED) until they ran, the wait ended or the
// client went away, then writes one trace per bucket session that ran, as
// "<profile_directory>/<model>_v<version>_b<bucket>_<unix ms>_<n>.json", and
// answers with the paths. Each session may record up to N runs, so under
// traffic on several buckets the traces together can hold more than N; a run
// still in progress when the count is reached lands in the session's next trace. DumpArenas returns onyx::DumpArenaLogs().
// Thread-safe. Destroy after the gRPC server has shut down.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "admin.grpc.pb.h"
#include "server/grpc/work_queue.h"
#include "server/models/model_repository.h"

namespace onyx::server {

class AdminService final : public onyx::admin::v1::Admin::CallbackService {
 public:
  struct Options {
    ModelRepository* repository = nullptr;  // must outlive the service
    // Where traces are written; created when missing.
    std::string profile_directory;
  };

  // INVALID_ARGUMENT without a repository or a profile directory.
  static absl::StatusOr<std::unique_ptr<AdminService>> Create(const Options& options);
  static constexpr int kProfileThreads = 2;
  static constexpr size_t kMaxQueuedProfiles = 16;

  // Waits for running profiles to answer.
  ~AdminService() override;

  grpc::ServerUnaryReactor* ProfileModel(grpc::CallbackServerContext* context,
                                         const onyx::admin::v1::ProfileModelRequest* request,
                                         onyx::admin::v1::ProfileModelResponse* response) override;
  grpc::ServerUnaryReactor* DumpArenas(grpc::CallbackServerContext* context,
                                       const onyx::admin::v1::DumpArenasRequest* request,
                                       onyx::admin::v1::DumpArenasResponse* response) override;

  // The profile itself, without gRPC: records `runs` runs of `model` or until
  // `deadline` / `cancelled()`. Errors as documented in admin.proto.
  absl::StatusOr<onyx::admin::v1::ProfileModelResponse> Profile(const Model& model, int64_t runs,
                                                                absl::Time deadline,
                                                                const std::function<bool()>& cancelled);

 private:
  explicit AdminService(Options options) : options_(std::move(options)) {}

  const Options options_;
  absl::Mutex mu_;
  std::set<std::string> profiling_ ABSL_GUARDED_BY(mu_);  // "model/version" being profiled
  // Last member: destroyed (joined) first, while the rest is still alive.
  WorkQueue profile_waits_{"profile", kProfileThreads, kMaxQueuedProfiles};
};

}  // namespace onyx::server
