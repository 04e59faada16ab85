#include "server/grpc/admin_service.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onyx/memory.h"
#include "server/grpc/status_util.h"

namespace onyx::server {
namespace {

constexpr int64_t kMaxProfiledRuns = 10000;
constexpr absl::Duration kDefaultWait = absl::Seconds(60);
// How often the profile thread looks at the sessions' run counts.
constexpr absl::Duration kPollInterval = absl::Milliseconds(5);

int64_t ProfiledRuns(const BucketSessions& sessions) {
  int64_t runs = 0;
  for (size_t i = 0; i < sessions.size(); ++i) runs += sessions.session(i).profiled_runs();
  return runs;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AdminService>> AdminService::Create(const Options& options) {
  if (options.repository == nullptr || options.profile_directory.empty()) {
    return absl::InvalidArgumentError("AdminService needs a repository and a profile directory");
  }
  return std::unique_ptr<AdminService>(new AdminService(options));
}

AdminService::~AdminService() = default;

absl::StatusOr<onyx::admin::v1::ProfileModelResponse> AdminService::Profile(
    const Model& model, int64_t runs, absl::Time deadline, const std::function<bool()>& cancelled) {
  if (runs < 1 || runs > kMaxProfiledRuns) {
    return absl::InvalidArgumentError(absl::StrCat("ProfileModel of model '", model.name(), "': runs must be 1 .. ",
                                                   kMaxProfiledRuns, ", got ", runs));
  }
  const std::string key = absl::StrCat(model.name(), "/", model.version_string());
  {
    absl::MutexLock lock(&mu_);
    if (!profiling_.insert(key).second) {
      return absl::FailedPreconditionError(absl::StrCat("model '", model.name(), "' version ",
                                                        model.version_string(), " is already being profiled"));
    }
  }
  struct Release {
    AdminService* self;
    std::string key;
    ~Release() {
      absl::MutexLock lock(&self->mu_);
      self->profiling_.erase(key);
    }
  } release{this, key};

  std::error_code ec;
  std::filesystem::create_directories(options_.profile_directory, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot create profile directory '", options_.profile_directory, "': ", ec.message()));
  }
  const BucketSessions& sessions = model.sessions();
  const std::string stamp = absl::StrCat(absl::ToUnixMillis(absl::Now()));
  // A session's count restarts at every EndProfiling; ours starts from here.
  std::vector<int64_t> before(sessions.size());
  for (size_t i = 0; i < sessions.size(); ++i) {
    before[i] = sessions.session(i).profiled_runs();
    const std::filesystem::path prefix =
        std::filesystem::path(options_.profile_directory) /
        absl::StrCat(model.name(), "_v", model.version_string(), "_b", sessions.bucket_label(i), "_", stamp);
    sessions.session(i).StartProfiling(runs, std::filesystem::absolute(prefix).string());
  }
  int64_t recorded = 0;
  while (true) {
    recorded = ProfiledRuns(sessions);
    for (int64_t b : before) recorded -= b;
    if (recorded >= runs || absl::Now() >= deadline || (cancelled && cancelled())) break;
    absl::SleepFor(kPollInterval);
  }
  onyx::admin::v1::ProfileModelResponse response;
  response.set_runs(std::min(recorded, runs));
  // Every session stops recording before any trace is written, so a failed
  // write cannot leave the others profiling into the next call.
  for (size_t i = 0; i < sessions.size(); ++i) sessions.session(i).StartProfiling(0);
  absl::Status first_error;
  for (size_t i = 0; i < sessions.size(); ++i) {
    const onyx::InferenceSession& session = sessions.session(i);
    if (session.profiled_runs() == before[i]) continue;
    absl::StatusOr<std::string> path = session.EndProfiling();
    if (path.ok()) {
      response.add_trace_files(*path);
    } else if (first_error.ok()) {
      first_error = absl::Status(path.status().code(),
                                 absl::StrCat("ProfileModel: model '", model.name(), "' version ",
                                              model.version_string(), " bucket ", sessions.bucket_label(i),
                                              ": ", path.status().message()));
    }
  }
  if (!first_error.ok()) return first_error;
  if (response.trace_files().empty()) {
    return absl::DeadlineExceededError(absl::StrCat("ProfileModel: model '", model.name(), "' version ",
                                                    model.version_string(), " ran no request before the wait ended"));
  }
  return response;
}

grpc::ServerUnaryReactor* AdminService::ProfileModel(grpc::CallbackServerContext* context,
                                                     const onyx::admin::v1::ProfileModelRequest* request,
                                                     onyx::admin::v1::ProfileModelResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<std::shared_ptr<const Model>> model =
      options_.repository->GetReady(request->model(), request->version());
  if (!model.ok()) {
    reactor->Finish(ToGrpcStatus(model.status()));
    return reactor;
  }
  const absl::Duration wait =
      request->timeout_ms() == 0 ? kDefaultWait : absl::Milliseconds(request->timeout_ms());
  const absl::Time deadline = std::min(absl::Now() + wait, absl::FromChrono(context->deadline()));
  // The wait happens on the profile queue, not the gRPC thread; the model
  // stays alive with the closure.
  absl::Status queued = profile_waits_.Submit([this, context, reactor, response, runs = request->runs(),
                                               deadline, model = std::move(*model)] {
    absl::StatusOr<onyx::admin::v1::ProfileModelResponse> result =
        Profile(*model, runs, deadline, [context] { return context->IsCancelled(); });
    if (result.ok()) *response = std::move(*result);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  if (!queued.ok()) reactor->Finish(ToGrpcStatus(queued));
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::DumpArenas(grpc::CallbackServerContext* context,
                                                   const onyx::admin::v1::DumpArenasRequest*,
                                                   onyx::admin::v1::DumpArenasResponse* response) {
  response->set_text(onyx::DumpArenaLogs());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace onyx::server
