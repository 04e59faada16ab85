#include "server/auth/authorizer.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "onyx/status_macros.h"
#include "spdlog/spdlog.h"

namespace onyx::server {
namespace {

constexpr absl::string_view kTritonHeaderPrefix = "triton-grpc-protocol-";

// What a call presented: tokens, and whether an `authorization` value was not
// a bearer token.
struct Credentials {
  std::vector<absl::string_view> tokens;
  std::vector<size_t> indexes;
  bool malformed = false;
};

Credentials FindCredentials(Authorizer::Metadata metadata) {
  Credentials found;
  for (size_t i = 0; i < metadata.size(); ++i) {
    const auto& [key, value] = metadata[i];
    if (key == "authorization") {
      found.indexes.push_back(i);
      absl::string_view v = absl::StripAsciiWhitespace(value);
      const size_t space = v.find(' ');
      if (space == absl::string_view::npos ||
          !absl::EqualsIgnoreCase(v.substr(0, space), "bearer")) {
        found.malformed = true;
        continue;
      }
      absl::string_view token = absl::StripLeadingAsciiWhitespace(v.substr(space + 1));
      if (token.empty()) {
        found.malformed = true;
        continue;
      }
      found.tokens.push_back(token);
    } else if (absl::StartsWith(key, kTritonHeaderPrefix)) {
      found.indexes.push_back(i);
      absl::string_view token = absl::StripAsciiWhitespace(value);
      if (!token.empty()) found.tokens.push_back(token);
    }
  }
  return found;
}

// True when any of `tokens` is in `set`; compares every token against every
// entry, whatever matched first.
bool AnyIn(const std::vector<absl::string_view>& tokens, const TokenSet* set) {
  if (set == nullptr) return false;
  bool found = false;
  for (absl::string_view token : tokens) found = set->Contains(token) | found;
  return found;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Authorizer>> Authorizer::Create(const Options& options) {
  std::unique_ptr<TokenFile> inference;
  std::unique_ptr<TokenFile> control;
  if (!options.inference_token_file.empty()) {
    ASSIGN_OR_RETURN(inference, TokenFile::Open(options.inference_token_file, "inference_token_file"));
  }
  if (!options.control_token_file.empty()) {
    ASSIGN_OR_RETURN(control, TokenFile::Open(options.control_token_file, "control_token_file"));
  }
  // With inference tokens and no control tokens, leaving control RPCs open
  // would let anyone load models on a server that otherwise demands a token.
  const bool control_enabled =
      options.control_rpcs_enabled && (control != nullptr || inference == nullptr);
  std::unique_ptr<Authorizer> authorizer(
      new Authorizer(std::move(inference), std::move(control), control_enabled));
  if (options.reload_interval != absl::InfiniteDuration() &&
      (authorizer->inference_ != nullptr || authorizer->control_ != nullptr)) {
    authorizer->poller_ = std::thread(
        [a = authorizer.get(), interval = options.reload_interval] { a->PollLoop(interval); });
  }
  return authorizer;
}

Authorizer::~Authorizer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (poller_.joinable()) poller_.join();
}

void Authorizer::PollLoop(absl::Duration interval) {
  absl::MutexLock lock(&mu_);
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping), interval)) {
    mu_.Unlock();
    ReloadNow();
    mu_.Lock();
  }
}

void Authorizer::ReloadNow() {
  for (TokenFile* file : {inference_.get(), control_.get()}) {
    if (file == nullptr) continue;
    absl::StatusOr<bool> changed = file->ReloadIfChanged();
    if (!changed.ok()) {
      spdlog::error("{}; the tokens read before stay in force",
                    std::string(changed.status().message()));
    } else if (*changed) {
      const size_t count = file->tokens()->size();
      if (count == 0) {
        spdlog::warn("reloaded '{}': it holds no token, so every token of its kind is revoked",
                     file->path());
      } else {
        spdlog::info("reloaded '{}': {} token(s)", file->path(), count);
      }
    }
  }
}

Authorizer::Decision Authorizer::Authorize(absl::string_view path, Metadata metadata) const {
  Credentials credentials = FindCredentials(metadata);
  Decision decision;
  decision.credentials = std::move(credentials.indexes);
  const RpcClass rpc_class = ClassifyRpc(path);
  if (rpc_class == RpcClass::kPublic) return decision;
  // The path is the client's string: named only when it is one of ours.
  const std::string method = IsKnownRpc(path) ? std::string(path) : "unknown method";
  if (rpc_class == RpcClass::kControl && !control_enabled_) {
    decision.status = absl::PermissionDeniedError(
        absl::StrCat(method, ": control RPCs are disabled on this server",
                     control_ == nullptr && inference_ != nullptr
                         ? " (inference_token_file is set and control_token_file is not)"
                         : " (control_rpcs: disabled)"));
    return decision;
  }
  // The token sets that open this class, and the one that would be the wrong kind.
  const std::shared_ptr<const TokenSet> inference =
      inference_ == nullptr ? nullptr : inference_->tokens();
  const std::shared_ptr<const TokenSet> control =
      control_ == nullptr ? nullptr : control_->tokens();
  const TokenSet* accepted[2] = {nullptr, nullptr};
  const TokenSet* wrong = nullptr;
  absl::string_view needed;
  switch (rpc_class) {
    case RpcClass::kInference:
      if (inference == nullptr) return decision;  // open
      accepted[0] = inference.get();
      wrong = control.get();
      needed = "an inference token";
      break;
    case RpcClass::kMetadata:
      if (inference == nullptr) return decision;  // open
      accepted[0] = inference.get();
      accepted[1] = control.get();
      needed = "an inference or a control token";
      break;
    default:                                    // control
      if (control == nullptr) return decision;  // open: no token file at all
      accepted[0] = control.get();
      wrong = inference.get();
      needed = "a control token";
      break;
  }
  const bool ok = AnyIn(credentials.tokens, accepted[0]) | AnyIn(credentials.tokens, accepted[1]);
  const bool other_kind = AnyIn(credentials.tokens, wrong);
  if (ok) return decision;
  if (other_kind) {
    decision.status = absl::PermissionDeniedError(
        absl::StrCat(method, ": the token presented is valid for ",
                     rpc_class == RpcClass::kControl ? "inference" : "control",
                     " RPCs only; this RPC needs ", needed));
  } else if (credentials.tokens.empty()) {
    decision.status = absl::UnauthenticatedError(
        absl::StrCat(method, ": ",
                     credentials.malformed ? "the 'authorization' metadata is not a bearer token"
                                           : "no credentials",
                     "; expected metadata 'authorization: Bearer <token>' with ", needed));
  } else {
    decision.status =
        absl::UnauthenticatedError(absl::StrCat(method, ": unknown token; expected ", needed));
  }
  return decision;
}

}  // namespace onyx::server
