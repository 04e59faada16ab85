// ServerCredentialsFor: the gRPC port's credentials — plaintext, TLS or mutual
// TLS — with, when an Authorizer is given, its check on every call.
//
//   std::shared_ptr<grpc::ServerCredentials> creds = ServerCredentialsFor(tls, authorizer);
//   builder.AddListeningPort(address, creds, &port);
//
// The check runs in gRPC core's server auth filter (an auth metadata
// processor, which gRPC's C++ API offers only on TLS credentials; these
// credentials install it on plaintext ones too): it sees the method path and
// the request metadata before gRPC routes the call, so no handler, interceptor
// or service — registered today or later — runs for a refused call, and the
// refusal costs no request parsing. A refused call ends with the Authorizer's
// status; an accepted one reaches its handler without its credential metadata
// (authorization, triton-grpc-protocol-*), so no handler can log a token.
// `tls` null: plaintext. `authorizer` null: no check (gRPC's own credentials).
// The Authorizer must outlive the server.
#pragma once

#include <memory>

#include "grpcpp/security/server_credentials.h"
#include "server/auth/authorizer.h"
#include "server/config/server_config.h"

namespace onyx::server {

std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(const TlsMaterial* tls,
                                                              const Authorizer* authorizer);

}  // namespace onyx::server
