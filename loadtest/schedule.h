// The absolute open-loop schedule: when each request should be sent.
//
//   RateProfile p;  p.Add(2.0, 500, 500);  p.Add(10.0, 500, 2000);   // hold, then ramp
//   ArrivalStream s(&p, /*poisson=*/false, /*seed=*/1, /*index=*/0, /*count=*/2);
//   for (double t = s.Next(); t < p.end_s(); t = s.Next()) SendAt(t0 + t);
//
// A RateProfile is a piecewise-linear rate r(t). Arrivals are the points where
// the expected count Λ(t) = ∫r crosses 0, 1, 2, ... (constant spacing) or the
// points of a unit-rate Poisson process mapped through Λ⁻¹ (Poisson). Send
// times are absolute offsets from the phase start, never "now + gap", so a
// sender that falls behind does not push the rest of the schedule back. With
// `count` senders, stream `index` takes every count-th constant arrival, or a
// Poisson process of 1/count of the rate (their union is the whole schedule).
//
// RateProfile: thread-compatible, immutable once built. ArrivalStream:
// thread-hostile (one per sender thread).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace onyx::load {

class RateProfile {
 public:
  // Appends `duration_s` seconds whose rate moves linearly from `from` to `to`.
  void Add(double duration_s, double from, double to);
  double end_s() const { return segments_.empty() ? 0 : segments_.back().t1; }
  double RateAt(double t) const;
  // Expected arrivals in [0, t).
  double CountAt(double t) const;
  // The t with CountAt(t) == u; +infinity when u is at or past the end's count.
  double TimeAtCount(double u) const;

 private:
  struct Segment {
    double t0, t1, r0, r1, u0;  // u0: CountAt(t0)
  };
  std::vector<Segment> segments_;
};

class ArrivalStream {
 public:
  ArrivalStream(const RateProfile* profile, bool poisson, uint64_t seed, int index, int count);
  // Next send time in seconds from the phase start; +infinity once past the end.
  double Next();

 private:
  const RateProfile* profile_;
  bool poisson_;
  int count_;
  double u_;  // position in expected-count space
  std::mt19937_64 rng_;
  std::exponential_distribution<double> exp_{1.0};
};

// Mixes a user seed with a stream number into an independent 64-bit seed.
uint64_t MixSeed(uint64_t seed, uint64_t stream);

}  // namespace onyx::load
