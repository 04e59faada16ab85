// The ModelStreamInfer reactor: a bidirectional stream of ModelInferRequests,
// each answered by one ModelStreamInferResponse (error_message set when that
// request failed; the stream stays open), in completion order, carrying the
// request's id.
//
//   return NewStreamInferReactor({env, metrics, gate});   // from the service handler
//
// Reads run ahead of inference: each request is started as it arrives and its
// reply queued for writing when the scheduler finishes it; gRPC threads never
// wait for inference. A StreamWindow bounds what one stream holds: at most
// max_outstanding requests started and not yet written back, and reply bytes
// buffered for the client within max_buffer_bytes; at either limit the stream
// stops reading until the client takes replies (HTTP/2 flow control then
// pushes back on the client), and a reply that would still overflow the
// buffer is replaced by a short error naming max_stream_buffer_bytes
// (RESOURCE_EXHAUSTED, overload reason stream_buffer_full). So a client that
// writes without reading cannot grow the server's memory. Each request is
// counted in the metrics with the status its client gets. The stream finishes
// OK after the client half-closes and every started request has been
// answered (or the stream broke).
#pragma once

#include <cstdint>
#include <functional>

#include "grpc_service.grpc.pb.h"
#include "server/grpc/call_gate.h"
#include "server/grpc/infer_call.h"
#include "server/observability/metrics.h"

namespace onyx::server {

inline constexpr int64_t kDefaultMaxStreamOutstanding = 256;
inline constexpr int64_t kDefaultMaxStreamBufferBytes = int64_t{64} << 20;

struct StreamInferOptions {
  InferEnv env;
  Metrics* metrics = nullptr;
  CallGate* gate = nullptr;  // each request enters and exits it
  // The stream's cancellation, handed to the scheduler with every request so
  // that queued requests of a cancelled stream never run. Null: never.
  std::function<bool()> is_cancelled;
  // Requests started plus replies not yet written, per stream.
  int64_t max_outstanding = kDefaultMaxStreamOutstanding;
  // Serialized reply bytes buffered and not yet written, per stream.
  int64_t max_buffer_bytes = kDefaultMaxStreamBufferBytes;
};

// The reactor deletes itself when gRPC is done with it.
grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
NewStreamInferReactor(const StreamInferOptions& options);

}  // namespace onyx::server
