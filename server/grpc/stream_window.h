// StreamWindow: the memory bound of one ModelStreamInfer stream — how many
// requests it has started and not answered, and how many reply bytes wait for
// a client that is not reading.
//
//   StreamWindow window({.max_outstanding = 256, .max_buffer_bytes = 64 << 20});
//   window.Started();                       // a request was read and started
//   if (window.Completed(reply_bytes)) window.Push(reply_bytes);
//   else { /* answer with a short error instead */ window.Push(error_bytes); }
//   window.Written(reply_bytes);            // the oldest buffered reply went out
//   if (window.MayRead()) StartRead(...);
//
// Reading stops while the requests started plus the replies buffered reach
// max_outstanding, or while the buffered reply bytes plus what the started
// requests and one more are expected to add (each as large as the largest
// reply so far; before the first reply, one request at a time) would pass
// max_buffer_bytes; a client that stops reading then holds the stream
// still and HTTP/2 flow control holds the client. A reply that still does not
// fit — the buffer is not empty and it would pass max_buffer_bytes — must not
// be buffered: Completed() says so, and the stream answers that request with
// a short RESOURCE_EXHAUSTED error instead. So the buffer never holds more
// than max_buffer_bytes, plus one reply when a single reply is larger than
// the whole buffer (it is let through alone), plus the short errors.
// Plain accounting, no I/O: thread-compatible (the stream holds its lock).
#pragma once

#include <algorithm>
#include <cstdint>

namespace onyx::server {

class StreamWindow {
 public:
  struct Limits {
    int64_t max_outstanding = 256;
    int64_t max_buffer_bytes = int64_t{64} << 20;
  };

  explicit StreamWindow(Limits limits) : limits_(limits) {}

  void Started() { ++pending_; }

  // A started request's reply of `bytes` is ready: true when it may be
  // buffered (then Push() it), false when the buffer is too full.
  bool Completed(int64_t bytes) {
    --pending_;
    return buffered_bytes_ == 0 || buffered_bytes_ + bytes <= limits_.max_buffer_bytes;
  }

  void Push(int64_t bytes) {
    ++buffered_;
    buffered_bytes_ += bytes;
    largest_reply_ = std::max(largest_reply_, bytes);
  }

  // The oldest buffered reply, of `bytes`, was written.
  void Written(int64_t bytes) {
    --buffered_;
    buffered_bytes_ -= bytes;
  }

  // The stream broke: buffered replies are dropped.
  void Clear() {
    buffered_ = 0;
    buffered_bytes_ = 0;
  }

  // Whether one more request may be read and started.
  bool MayRead() const {
    if (pending_ + buffered_ >= limits_.max_outstanding) return false;
    // Until a reply shows how large replies are, one request at a time.
    if (largest_reply_ == 0) return pending_ == 0;
    return buffered_bytes_ + (pending_ + 1) * largest_reply_ <= limits_.max_buffer_bytes;
  }

  int64_t pending() const { return pending_; }
  int64_t buffered() const { return buffered_; }
  int64_t buffered_bytes() const { return buffered_bytes_; }
  int64_t max_buffer_bytes() const { return limits_.max_buffer_bytes; }

 private:
  const Limits limits_;
  int64_t pending_ = 0;         // started, reply not ready
  int64_t buffered_ = 0;        // replies queued, not yet written
  int64_t buffered_bytes_ = 0;  // their serialized size
  int64_t largest_reply_ = 0;   // largest reply so far
};

}  // namespace onyx::server
