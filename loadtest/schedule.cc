#include "loadtest/schedule.h"

#include <cmath>
#include <limits>

namespace onyx::load {

void RateProfile::Add(double duration_s, double from, double to) {
  if (duration_s <= 0) return;
  const double t0 = end_s();
  const double u0 = segments_.empty() ? 0 : CountAt(t0);
  segments_.push_back({t0, t0 + duration_s, from, to, u0});
}

double RateProfile::RateAt(double t) const {
  for (const Segment& s : segments_) {
    if (t >= s.t0 && t < s.t1) return s.r0 + (s.r1 - s.r0) * (t - s.t0) / (s.t1 - s.t0);
  }
  return 0;
}

double RateProfile::CountAt(double t) const {
  double u = 0;
  for (const Segment& s : segments_) {
    const double tau = std::min(t, s.t1) - s.t0;
    if (tau <= 0) break;
    const double slope = (s.r1 - s.r0) / (s.t1 - s.t0);
    u = s.u0 + s.r0 * tau + 0.5 * slope * tau * tau;
  }
  return u;
}

double RateProfile::TimeAtCount(double u) const {
  for (const Segment& s : segments_) {
    const double d = s.t1 - s.t0;
    const double u1 = s.u0 + 0.5 * (s.r0 + s.r1) * d;
    if (u >= u1) continue;
    // Solve u - u0 = r0*tau + a*tau^2 with a = (r1 - r0) / (2d), in the form
    // that stays accurate when a is near zero.
    const double du = u - s.u0;
    const double a = (s.r1 - s.r0) / (2 * d);
    const double root = std::sqrt(std::max(0.0, s.r0 * s.r0 + 4 * a * du));
    const double denominator = s.r0 + root;
    if (denominator <= 0) return s.t0;
    return s.t0 + 2 * du / denominator;
  }
  return std::numeric_limits<double>::infinity();
}

uint64_t MixSeed(uint64_t seed, uint64_t stream) {
  // splitmix64 over both words.
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

ArrivalStream::ArrivalStream(const RateProfile* profile, bool poisson, uint64_t seed, int index, int count)
    : profile_(profile), poisson_(poisson), count_(count), u_(0), rng_(MixSeed(seed, 1000 + index)) {
  u_ = poisson_ ? count_ * exp_(rng_) : static_cast<double>(index);
}

double ArrivalStream::Next() {
  const double t = profile_->TimeAtCount(u_);
  u_ += poisson_ ? count_ * exp_(rng_) : count_;
  return t;
}

}  // namespace onyx::load
