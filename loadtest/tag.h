// Tag: what onyx-load puts on a completion queue. The reaper calls
// Proceed(ok) for every event; each call and stream operation is a Tag.
#pragma once

namespace onyx::load {

class Tag {
 public:
  virtual ~Tag() = default;
  virtual void Proceed(bool ok) = 0;
};

}  // namespace onyx::load
