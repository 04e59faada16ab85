"""A bare HTTP/2 client over one TCP socket, for the transport rows of the
matrix: it sends what a well-behaved gRPC library never would (floods of
pings, streams reset as soon as they open, more streams than the server
allows, half a frame) and reads back every frame the server answers with.

Only what those rows need: frames (RFC 9113 section 4), HPACK literal header
fields without indexing or Huffman coding (RFC 7541 section 6.2.2), and gRPC's
length-prefixed messages. Header blocks the server sends are not decoded; a
gRPC status is read from the literal bytes of its trailers.
"""
import socket
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SETTINGS_MAX_CONCURRENT_STREAMS, SETTINGS_MAX_HEADER_LIST_SIZE = 3, 6
CANCEL, REFUSED_STREAM, ENHANCE_YOUR_CALM = 0x8, 0x7, 0xb


def hpack_int(value, prefix_bits, first_byte=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first_byte | value])
    out = [first_byte | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack_literal(name, value):
    """Literal header field without indexing, new name, no Huffman."""
    name, value = name.encode(), value.encode()
    return b"\x00" + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value


def grpc_headers(path, authority="onyx", extra=()):
    fields = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", authority),
              ("content-type", "application/grpc"), ("te", "trailers")] + list(extra)
    return b"".join(hpack_literal(n, v) for n, v in fields)


def grpc_message(payload=b""):
    return b"\x00" + struct.pack(">I", len(payload)) + payload


def frame_bytes(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


class Frame:
    def __init__(self, ftype, flags, stream, payload):
        self.type, self.flags, self.stream, self.payload = ftype, flags, stream, payload

    def goaway_error(self):
        return struct.unpack(">I", self.payload[4:8])[0]

    def goaway_debug(self):
        return self.payload[8:].decode(errors="replace")

    def rst_error(self):
        return struct.unpack(">I", self.payload[:4])[0]

    def settings(self):
        return {struct.unpack(">H", self.payload[i:i + 2])[0]: struct.unpack(">I", self.payload[i + 2:i + 6])[0]
                for i in range(0, len(self.payload), 6)}


def connect(address, timeout=10.0):
    """A TCP socket to "host:port"."""
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=timeout)


class Connection:
    """One HTTP/2 connection (a context manager that closes it). closed is set
    once the server hung up."""

    def __init__(self, address, timeout=10.0):
        self.sock = connect(address, timeout)
        self.buffer = b""
        self.closed = False
        self.next_stream = 1
        self.server_settings = None

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def ping_round_trip(self, timeout=10.0):
        """Sends a PING and reads up to its ACK: the server has then read
        everything sent before it (our SETTINGS ACK included)."""
        self.send_frame(PING, 0, 0, b"syncsync")
        deadline = time.monotonic() + timeout
        while True:
            frame = self.read_frame(deadline)
            if frame is None:
                raise ConnectionError("closed before the PING ACK")
            if frame.type == PING and frame.flags & ACK:
                return

    def send_raw(self, data):
        self.sock.sendall(data)

    def send_frame(self, ftype, flags, stream, payload=b""):
        self.sock.sendall(frame_bytes(ftype, flags, stream, payload))

    def handshake(self):
        """Client preface and empty SETTINGS; reads the server's SETTINGS and
        acknowledges it (limits are enforced once acknowledged)."""
        self.send_raw(PREFACE + frame_bytes(SETTINGS, 0, 0))
        while self.server_settings is None:
            frame = self.read_frame(deadline=time.monotonic() + 10)
            if frame is None:
                raise ConnectionError("closed during the HTTP/2 handshake")
            if frame.type == SETTINGS and not frame.flags & ACK:
                self.server_settings = frame.settings()
        self.send_frame(SETTINGS, ACK, 0)
        return self.server_settings

    def open_stream(self, path, end_stream=False, extra_headers=()):
        stream = self.next_stream
        self.next_stream += 2
        self.send_frame(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), stream,
                        grpc_headers(path, extra=extra_headers))
        return stream

    def read_frame(self, deadline):
        """The next frame, or None when the server closed the connection.
        Raises TimeoutError at `deadline`."""
        while len(self.buffer) < 9 or len(self.buffer) < 9 + struct.unpack(">I", b"\0" + self.buffer[:3])[0]:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no frame before the deadline")
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise TimeoutError("no frame before the deadline")
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
        length = struct.unpack(">I", b"\0" + self.buffer[:3])[0]
        ftype, flags = self.buffer[3], self.buffer[4]
        stream = struct.unpack(">I", self.buffer[5:9])[0] & 0x7FFFFFFF
        payload = self.buffer[9:9 + length]
        self.buffer = self.buffer[9 + length:]
        return Frame(ftype, flags, stream, payload)

    def frames_until_closed(self, timeout):
        """Every frame until the server closes the connection; TimeoutError
        when it is still open after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        frames = []
        while True:
            frame = self.read_frame(deadline)
            if frame is None:
                return frames
            frames.append(frame)


def wait_closed(sock, timeout):
    """Seconds until the peer closes `sock` (bytes it sends are read and
    dropped), or None when it is still open after `timeout`."""
    start = time.monotonic()
    deadline = start + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        sock.settimeout(remaining)
        try:
            if not sock.recv(65536):
                return time.monotonic() - start
        except socket.timeout:
            return None
        except ConnectionResetError:
            return time.monotonic() - start
