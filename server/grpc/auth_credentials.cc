#include "server/grpc/auth_credentials.h"

#include <string>
#include <utility>
#include <vector>

#include "grpc/grpc.h"
#include "grpc/grpc_security.h"
#include "grpcpp/security/server_credentials.h"
#include "spdlog/spdlog.h"

namespace onyx::server {
namespace {

absl::string_view View(const grpc_slice& slice) {
  return absl::string_view(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(slice)),
                           GRPC_SLICE_LENGTH(slice));
}

// Core credentials with the Authorizer installed as their metadata processor.
// grpc::ServerCredentials lets a subclass bind ports itself (AddPortToServer),
// which is how it reaches core credentials that the C++ wrappers do not expose.
class AuthorizingCredentials final : public grpc::ServerCredentials {
 public:
  AuthorizingCredentials(grpc_server_credentials* core, const Authorizer* authorizer)
      : core_(core) {
    grpc_auth_metadata_processor processor;
    processor.process = &AuthorizingCredentials::Process;
    processor.destroy = nullptr;
    processor.state = const_cast<Authorizer*>(authorizer);
    grpc_server_credentials_set_auth_metadata_processor(core_, processor);
  }
  ~AuthorizingCredentials() override { grpc_server_credentials_release(core_); }

  void SetAuthMetadataProcessor(const std::shared_ptr<grpc::AuthMetadataProcessor>&) override {
    spdlog::critical("AuthorizingCredentials: SetAuthMetadataProcessor is not supported");
  }

 private:
  int AddPortToServer(const std::string& address, grpc_server* server) override {
    return grpc_server_add_http2_port(server, address.c_str(), core_);
  }

  // Runs inline on the transport's thread (the check takes microseconds).
  static void Process(void* state, grpc_auth_context*, const grpc_metadata* md, size_t num_md,
                      grpc_process_auth_metadata_done_cb done, void* user_data) {
    const auto* authorizer = static_cast<const Authorizer*>(state);
    std::vector<std::pair<absl::string_view, absl::string_view>> metadata;
    metadata.reserve(num_md);
    absl::string_view path;
    for (size_t i = 0; i < num_md; ++i) {
      metadata.emplace_back(View(md[i].key), View(md[i].value));
      if (metadata.back().first == ":path") path = metadata.back().second;
    }
    Authorizer::Decision decision = authorizer->Authorize(path, metadata);
    if (!decision.status.ok()) {
      spdlog::debug("refused a call: {}", std::string(decision.status.message()));
      const std::string message(decision.status.message());
      done(user_data, nullptr, 0, nullptr, 0, static_cast<grpc_status_code>(decision.status.code()),
           message.c_str());
      return;
    }
    std::vector<grpc_metadata> consumed;
    consumed.reserve(decision.credentials.size());
    for (size_t index : decision.credentials) consumed.push_back(md[index]);
    done(user_data, consumed.data(), consumed.size(), nullptr, 0, GRPC_STATUS_OK, nullptr);
  }

  grpc_server_credentials* const core_;
};

grpc_server_credentials* CoreCredentials(const TlsMaterial* tls) {
  if (tls == nullptr) return grpc_insecure_server_credentials_create();
  grpc_ssl_pem_key_cert_pair pair = {tls->key_pem.c_str(), tls->cert_pem.c_str()};
  return grpc_ssl_server_credentials_create_ex(
      tls->client_ca_pem.empty() ? nullptr : tls->client_ca_pem.c_str(), &pair, 1,
      tls->client_ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                 : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY,
      nullptr);
}

}  // namespace

std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(const TlsMaterial* tls,
                                                              const Authorizer* authorizer) {
  if (authorizer != nullptr) {
    return std::make_shared<AuthorizingCredentials>(CoreCredentials(tls), authorizer);
  }
  if (tls == nullptr) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      tls->client_ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                 : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls->client_ca_pem;
  options.pem_key_cert_pairs.push_back({tls->key_pem, tls->cert_pem});
  return grpc::SslServerCredentials(options);
}

}  // namespace onyx::server
