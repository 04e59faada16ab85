// Authorizer: decides, from a call's method path and request metadata, whether
// onyxd serves it — the one check every RPC passes (AuthorizingCredentials
// runs it in gRPC's transport before any handler).
//
//   Authorizer::Options options;
//   options.inference_token_file = "/etc/onyx/inference.tokens";
//   options.control_token_file = "/etc/onyx/control.tokens";
//   ASSIGN_OR_RETURN(std::unique_ptr<Authorizer> auth, Authorizer::Create(options));
//   Authorizer::Decision d = auth->Authorize("/inference.GRPCInferenceService/ModelInfer",
//                                            {{"authorization", "Bearer s3cret"}});
//
// Credentials: `authorization: Bearer <token>` (the scheme in any case, as
// RFC 6750 allows), or the header Triton clients send to a server with
// restricted protocols, `triton-grpc-protocol-<key>: <token>` (any <key>; the
// value is the token). Every credential the call carries is tried.
// Policy (rpc_classes.h for the classes):
//   public RPCs       always served;
//   inference RPCs    need an inference token when inference_token_file is set,
//                     else are open;
//   metadata RPCs     need an inference or a control token when
//                     inference_token_file is set, else are open;
//   control RPCs      refused (PERMISSION_DENIED) when control_rpcs_enabled is
//                     false, or when only inference_token_file is set (auth is
//                     on and no token could open them); need a control token
//                     when control_token_file is set; else open.
// No credential, a malformed `authorization` or an unknown token is
// UNAUTHENTICATED; a token of the other set is PERMISSION_DENIED. Neither is
// retryable. Messages name the method and what is expected, never a token.
// Token files are re-read when they change (TokenFile::ReloadIfChanged), by a
// thread polling every `reload_interval`, so tokens rotate without a restart.
// Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/auth/rpc_classes.h"
#include "server/auth/token_file.h"

namespace onyx::server {

class Authorizer {
 public:
  struct Options {
    // Empty: no token set of that kind.
    std::string inference_token_file;
    std::string control_token_file;
    // False: every control RPC is refused, whatever the token.
    bool control_rpcs_enabled = true;
    // How often the token files are checked for changes; InfiniteDuration:
    // never (tests call ReloadNow()).
    absl::Duration reload_interval = absl::Seconds(1);
  };

  // INVALID_ARGUMENT naming the key (inference_token_file, control_token_file)
  // for a file that cannot be read, has a bad line or holds no token.
  static absl::StatusOr<std::unique_ptr<Authorizer>> Create(const Options& options);
  // Stops the reload thread.
  ~Authorizer();

  // Request metadata as gRPC delivers it: lower-case keys, in order.
  using Metadata = absl::Span<const std::pair<absl::string_view, absl::string_view>>;

  struct Decision {
    absl::Status status;
    // Indexes into the metadata of the credentials found (authorization and
    // triton-grpc-protocol-*): removed from the call before a handler sees it.
    std::vector<size_t> credentials;
  };

  // The verdict for one call of `path`.
  Decision Authorize(absl::string_view path, Metadata metadata) const;

  // Re-reads changed token files now; problems are logged (never a token).
  void ReloadNow();

  // Whether control RPCs can be served at all (see the policy above).
  bool control_rpcs_enabled() const { return control_enabled_; }

 private:
  Authorizer(std::unique_ptr<TokenFile> inference, std::unique_ptr<TokenFile> control,
             bool control_enabled)
      : inference_(std::move(inference)),
        control_(std::move(control)),
        control_enabled_(control_enabled) {}
  void PollLoop(absl::Duration interval);

  const std::unique_ptr<TokenFile> inference_;  // null: none configured
  const std::unique_ptr<TokenFile> control_;    // null: none configured
  const bool control_enabled_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread poller_;
};

}  // namespace onyx::server
