"""The transport rows of the attack and fault matrix (matrix_test.py): what a
hostile or broken HTTP/2 peer does to onyxd's gRPC port, each with the exact
answer the server's transport limits (config/README.md, `transport`) give.

TRANSPORT is the `transport` section matrix_test.py starts onyxd with: limits
small enough that the rows run in seconds.
"""
import os
import time

import numpy as np

import h2_raw
import python_client_test as base

CaseFailure, check = base.CaseFailure, base.check

TRANSPORT = {
    "max_concurrent_streams": 32,
    "max_metadata_bytes": 8192,
    "handshake_timeout_seconds": 2,
    "max_connection_idle_seconds": 6,
    "min_ping_interval_seconds": 10,
    "max_ping_strikes": 2,
}
SERVER_LIVE = "/inference.GRPCInferenceService/ServerLive"
MODEL_INFER = "/inference.GRPCInferenceService/ModelInfer"


def transport_rows(m, max_message_bytes):
    SC = m.SC
    grpc = m.client.grpc
    address = m.address

    def recorded(row):
        """Runs row() as one ledger entry: OK when it returns."""
        def run():
            rid = m.ledger.sent("row")
            try:
                row()
            finally:
                m.ledger.finished(rid, "OK")
        return run

    def own_channel(options=(), **kwargs):
        """A channel on a connection of its own: by default gRPC Python shares
        one connection among channels to the same address and arguments."""
        return grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)] + list(options),
                                     **kwargs)

    def server_live_on(conn):
        """A ServerLive on `conn`; the grpc-status of its trailers."""
        stream = conn.open_stream(SERVER_LIVE)
        conn.send_frame(h2_raw.DATA, h2_raw.END_STREAM, stream, h2_raw.grpc_message())
        deadline = time.monotonic() + 10
        while True:
            frame = conn.read_frame(deadline)
            check(frame is not None, "the connection closed before ServerLive answered")
            if frame.type == h2_raw.HEADERS and frame.stream == stream and frame.flags & h2_raw.END_STREAM:
                check(b"grpc-status" in frame.payload, "trailers without grpc-status")
                return frame.payload

    def settings_advertise_limits():
        with h2_raw.Connection(address) as conn:
            settings = conn.handshake()
            check(settings.get(h2_raw.SETTINGS_MAX_CONCURRENT_STREAMS) == TRANSPORT["max_concurrent_streams"],
                  "SETTINGS_MAX_CONCURRENT_STREAMS %s, want %d" % (
                      settings.get(h2_raw.SETTINGS_MAX_CONCURRENT_STREAMS), TRANSPORT["max_concurrent_streams"]))
            check(settings.get(h2_raw.SETTINGS_MAX_HEADER_LIST_SIZE) == TRANSPORT["max_metadata_bytes"],
                  "SETTINGS_MAX_HEADER_LIST_SIZE %s, want %d" % (
                      settings.get(h2_raw.SETTINGS_MAX_HEADER_LIST_SIZE), TRANSPORT["max_metadata_bytes"]))

    def stream_past_the_cap_closes_the_connection():
        # The cap is advertised in SETTINGS; gRPC clients queue calls at it.
        # A peer that opens one stream more commits a connection error in
        # gRPC 1.51: it loses the connection, its open calls end UNAVAILABLE,
        # and the stream past the cap is never served.
        cap = TRANSPORT["max_concurrent_streams"]
        with h2_raw.Connection(address) as conn:
            conn.handshake()
            conn.ping_round_trip()  # the cap is in force before the streams arrive
            streams = [conn.open_stream(MODEL_INFER) for _ in range(cap)]
            quiet_until = time.monotonic() + 1
            try:  # the cap open and waiting for their messages: no stream is answered
                while True:  # (connection upkeep — SETTINGS, PING, WINDOW_UPDATE on stream 0 — may come)
                    frame = conn.read_frame(quiet_until)
                    if frame is None or frame.stream != 0 or frame.type == h2_raw.GOAWAY:
                        raise CaseFailure("at the cap the server sent %s" % (
                            "nothing and closed" if frame is None else
                            "frame type %d on stream %d" % (frame.type, frame.stream)))
            except TimeoutError:
                pass
            over = conn.open_stream(MODEL_INFER)
            frames = conn.frames_until_closed(timeout=10)
            unavailable = {f.stream for f in frames if f.type == h2_raw.HEADERS and b"grpc-status\x0214" in f.payload}
            answered = {f.stream for f in frames if f.type in (h2_raw.HEADERS, h2_raw.DATA)}
            check(unavailable == set(streams), "%d of the %d open calls ended UNAVAILABLE" % (
                len(unavailable & set(streams)), cap))
            check(over not in answered, "the stream past the cap was answered")

    def ping_flood():
        with h2_raw.Connection(address) as conn:
            conn.handshake()
            sent = 0
            try:
                for i in range(1000):
                    conn.send_frame(h2_raw.PING, 0, 0, b"%08d" % i)
                    sent += 1
            except OSError:  # closed by the server mid-flood
                pass
            frames = conn.frames_until_closed(timeout=10)
            acks = sum(1 for f in frames if f.type == h2_raw.PING and f.flags & h2_raw.ACK)
            check(sent >= TRANSPORT["max_ping_strikes"] + 2, "only %d pings sent" % sent)
            goaway = [f for f in frames if f.type == h2_raw.GOAWAY]
            check(goaway, "no GOAWAY after %d pings (%d acknowledged)" % (sent, acks))
            check(goaway[-1].goaway_error() == h2_raw.ENHANCE_YOUR_CALM and
                  "too_many_pings" in goaway[-1].goaway_debug(),
                  "GOAWAY error %d %r, want ENHANCE_YOUR_CALM too_many_pings" % (
                      goaway[-1].goaway_error(), goaway[-1].goaway_debug()))
            # Pings read in the same batch as the strike are still answered:
            # the count of acks is not a property of the policy.

    def rapid_stream_resets():
        # HEADERS then RST_STREAM(CANCEL) at once, 20,000 times on one
        # connection: gRPC 1.51 predates the rapid-reset mitigations, so
        # onyxd must bear it with the cap alone — the canary, the probe and
        # the connection itself keep working.
        with h2_raw.Connection(address) as conn:
            conn.handshake()
            headers = h2_raw.grpc_headers(MODEL_INFER)
            for batch in range(200):
                chunk = []
                for _ in range(100):
                    stream = conn.next_stream
                    conn.next_stream += 2
                    chunk.append(h2_raw.frame_bytes(h2_raw.HEADERS, h2_raw.END_HEADERS, stream, headers))
                    chunk.append(h2_raw.frame_bytes(h2_raw.RST_STREAM, 0, stream, b"\0\0\0\x08"))
                conn.send_raw(b"".join(chunk))
            trailers = server_live_on(conn)
            check(b"grpc-status\x010" in trailers, "ServerLive after the resets: trailers %r" % trailers[:200])

    def oversized_metadata():
        # On its own connection: gRPC 1.51 refuses the over-limit headers but
        # its HPACK state for that connection does not survive them — other
        # calls on the offender's connection may end UNAVAILABLE ("Socket
        # closed") or be refused as over the limit too. Other connections,
        # the canary's among them, are untouched (the invariants check it).
        limit = TRANSPORT["max_metadata_bytes"]
        channel = own_channel()
        try:
            stub = m.client.stub.__class__(channel)
            # Under the limit the call is served ...
            stub.ServerLive(m.client.pb.ServerLiveRequest(), metadata=[("x-pad", "a" * (limit // 2))], timeout=10)
            # ... over it, refused before it reaches onyxd.
            m.expect_status(lambda: stub.ServerLive(m.client.pb.ServerLiveRequest(),
                                                    metadata=[("x-pad", "a" * (limit * 4))], timeout=10),
                            SC.RESOURCE_EXHAUSTED, "metadata size exceeds limit")
        finally:
            channel.close()

    def message_at_and_over_the_limit():
        channel = own_channel([("grpc.max_send_message_length", -1)])
        try:
            stub = m.client.stub.__class__(channel)
            x = np.arange(48, dtype=np.float32).reshape(3, 16)

            def request(size):
                req = m.client.infer_request("mlp", "input", "FP32", [3, 16], raw=x.tobytes())
                pad = size - req.ByteSize()
                req.parameters["pad"].string_param = "p" * pad
                while req.ByteSize() > size:  # the length prefixes grew with the pad
                    pad -= req.ByteSize() - size
                    req.parameters["pad"].string_param = "p" * pad
                check(req.ByteSize() == size, "cannot build a %d-byte request (%d)" % (size, req.ByteSize()))
                return req

            rid = m.ledger.sent("row")
            stub.ModelInfer(request(max_message_bytes), timeout=60)  # exactly at the limit: served
            m.ledger.finished(rid, "OK")
            details = m.expect_status(lambda: stub.ModelInfer(request(max_message_bytes + 1), timeout=60),
                                      SC.RESOURCE_EXHAUSTED)
            check(str(max_message_bytes) in details, "details %r do not give the limit" % details[:200])
        finally:
            channel.close()

    def compressed_message_inflating_past_the_limit():
        channel = own_channel([("grpc.max_send_message_length", -1)], compression=grpc.Compression.Gzip)
        try:
            stub = m.client.stub.__class__(channel)
            x = np.zeros((3, 16), dtype=np.float32)
            req = m.client.infer_request("mlp", "input", "FP32", [3, 16], raw=x.tobytes())
            req.parameters["pad"].string_param = "\0" * (2 * max_message_bytes)  # gzip: ~130 KiB on the wire
            details = m.expect_status(lambda: stub.ModelInfer(req, timeout=60), SC.RESOURCE_EXHAUSTED,
                                      "larger than max")
            check(str(max_message_bytes) in details, "details %r do not give the limit" % details[:200])
        finally:
            channel.close()

    def closed_without_a_word(payload, what):
        def row():
            with h2_raw.connect(address) as sock:
                sock.sendall(payload)
                after = h2_raw.wait_closed(sock, timeout=5)
                check(after is not None, "%s: the connection is still open after 5 s" % what)
        return row

    def silent_connection():
        with h2_raw.connect(address) as sock:
            timeout = TRANSPORT["handshake_timeout_seconds"]
            after = h2_raw.wait_closed(sock, timeout=timeout + 5)
            check(after is not None, "a silent connection is still open after %d s" % (timeout + 5))
            check(after >= timeout - 0.5, "closed after %.1f s, before the %d s handshake timeout" % (after, timeout))

    def idle_connection():
        with h2_raw.Connection(address) as conn:
            conn.handshake()
            start = time.monotonic()
            idle = TRANSPORT["max_connection_idle_seconds"]
            frames = conn.frames_until_closed(timeout=idle + 10)
            after = time.monotonic() - start
            goaway = [f for f in frames if f.type == h2_raw.GOAWAY]
            check(goaway, "closed after %.1f s without GOAWAY" % after)
            check(after >= idle - 0.5, "closed after %.1f s, before the %d s idle limit" % (after, idle))

    def half_sent_headers():
        # A HEADERS frame that announces 1000 bytes and sends 10: the frame
        # never completes, no stream opens, and the idle limit closes it.
        with h2_raw.Connection(address) as conn:
            conn.handshake()
            conn.send_raw(h2_raw.frame_bytes(h2_raw.HEADERS, h2_raw.END_HEADERS, 1, b"x" * 1000)[:19])
            idle = TRANSPORT["max_connection_idle_seconds"]
            after = h2_raw.wait_closed(conn.sock, timeout=idle + 10)
            check(after is not None, "a half-sent frame kept the connection open %d s" % (idle + 10))

    return [
        ("transport_settings_advertise_the_limits", recorded(settings_advertise_limits)),
        ("transport_stream_past_the_cap_closes_the_connection",
         recorded(stream_past_the_cap_closes_the_connection)),
        ("transport_ping_flood", recorded(ping_flood)),
        ("transport_rapid_stream_resets", recorded(rapid_stream_resets)),
        ("transport_oversized_metadata", oversized_metadata),
        ("transport_message_at_and_one_byte_over_the_limit", message_at_and_over_the_limit),
        ("transport_compressed_message_inflating_past_the_limit", compressed_message_inflating_past_the_limit),
        ("transport_random_bytes", recorded(closed_without_a_word(os.urandom(65536), "random bytes"))),
        ("transport_http1_request", recorded(closed_without_a_word(
            b"GET /v2/health/ready HTTP/1.1\r\nHost: onyx\r\nConnection: keep-alive\r\n\r\n", "HTTP/1.1"))),
        ("transport_silent_connection_closed_at_handshake_timeout", recorded(silent_connection)),
        ("transport_idle_connection_closed", recorded(idle_connection)),
        ("transport_half_sent_headers_frame", recorded(half_sent_headers)),
    ]

