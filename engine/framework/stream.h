// Stream: an ordered queue of work on one device lane. A provider whose device
// executes asynchronously (CUDA, the test device) gives each session a stream
// backed by its own thread or device queue; work submitted to a stream runs in
// submission order, off the caller's thread. CPU lanes need no stream.
//
// Notification (a countdown barrier over producers on other lanes) is what the
// executor uses to make a consumer wait for them: see exec/parallel_executor.h.
// Thread-safe.
#pragma once

#include <functional>
#include <memory>

namespace onyx {

class Stream {
 public:
  virtual ~Stream() = default;
  // Queues `work`; returns at once. Work items run one at a time, in order.
  virtual void Submit(std::function<void()> work) = 0;
};

// A stream served by one dedicated worker thread, created with the stream and
// joined when it is destroyed (after finishing queued work).
std::unique_ptr<Stream> MakeThreadStream();

}  // namespace onyx
