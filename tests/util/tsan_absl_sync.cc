// absl::Mutex and absl::CondVar that ThreadSanitizer can see, linked into
// every executable of a TSan build (ONYX_SANITIZE=thread) and nowhere else.
//
// Debian's abseil is not built with TSan: its Mutex synchronizes through
// uninstrumented atomics and futexes, so TSan reports every access to data
// a Mutex guards as a race (hundreds per test binary). These definitions
// interpose the library's exported Mutex and CondVar entry points (the
// executable's symbols win over the shared library's, for onyx's calls and
// for gRPC's and abseil's own calls through their PLT) with a plain
// implementation on pthread mutexes and condition variables, which TSan
// models: the happens-before edges of every lock and unlock become visible,
// and a report is a real race again.
//
// Each absl::Mutex gets a side record (keyed by its address, created on first
// use, removed by its destructor) holding the reader/writer state; the
// Mutex's own word is never touched. Conditions are evaluated by the thread
// that waits on them, with the lock held, and re-evaluated after every
// release by another thread; CondVar wakeups may be spurious, as abseil
// allows. absl::Notification keeps the library's implementation, whose fast
// path reads its flag without the Mutex: Notify releases and a finished wait
// acquires on the flag's address, which is also what the header's inline
// HasBeenNotified() reads.
#include <dlfcn.h>
#include <pthread.h>
#include <sanitizer/tsan_interface.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unordered_map>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace {

struct MutexState {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t changed;
  bool writer = false;
  pthread_t owner{};
  int readers = 0;
  uint64_t releases = 0;  // every unlock, so waiters re-evaluate conditions

  MutexState() {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_REALTIME);
    pthread_cond_init(&changed, &attr);
    pthread_condattr_destroy(&attr);
  }
};

struct CondVarState {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t signalled = PTHREAD_COND_INITIALIZER;
  uint64_t signals = 0;
};

template <typename State>
class SideTable {
 public:
  State* Get(const void* key) {
    Shard& s = shards_[Hash(key)];
    pthread_mutex_lock(&s.m);
    State*& state = s.map[key];
    if (state == nullptr) state = new State();
    pthread_mutex_unlock(&s.m);
    return state;
  }
  void Erase(const void* key) {
    Shard& s = shards_[Hash(key)];
    pthread_mutex_lock(&s.m);
    auto it = s.map.find(key);
    if (it != s.map.end()) {
      delete it->second;
      s.map.erase(it);
    }
    pthread_mutex_unlock(&s.m);
  }

 private:
  static constexpr int kShards = 64;
  struct Shard {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    std::unordered_map<const void*, State*> map;
  };
  static size_t Hash(const void* key) { return (reinterpret_cast<uintptr_t>(key) >> 4) % kShards; }
  Shard shards_[kShards];
};

// Function-local statics: abseil mutexes are used by static initializers of
// other translation units and libraries.
SideTable<MutexState>& Mutexes() {
  static auto* table = new SideTable<MutexState>();
  return *table;
}
SideTable<CondVarState>& CondVars() {
  static auto* table = new SideTable<CondVarState>();
  return *table;
}

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "tsan_absl_sync: %s\n", what);
  std::abort();
}

bool HeldAsWriterBySelf(const MutexState& s) { return s.writer && pthread_equal(s.owner, pthread_self()); }

// Waits on `cond` of `m` (held) until `deadline`; false on timeout.
bool WaitUntil(pthread_cond_t* cond, pthread_mutex_t* m, const timespec* deadline) {
  if (deadline == nullptr) {
    pthread_cond_wait(cond, m);
    return true;
  }
  return pthread_cond_timedwait(cond, m, deadline) != ETIMEDOUT;
}

// With s.m held: waits until the lock is free for this mode, then takes it.
void AcquireLocked(MutexState& s, bool read) {
  while (s.writer || (!read && s.readers > 0)) pthread_cond_wait(&s.changed, &s.m);
  if (read) {
    ++s.readers;
  } else {
    s.writer = true;
    s.owner = pthread_self();
  }
}

void ReleaseLocked(MutexState& s, bool read) {
  if (read) {
    if (s.readers <= 0) Die("ReaderUnlock of a Mutex not held for reading");
    --s.readers;
  } else {
    if (!HeldAsWriterBySelf(s)) Die("Unlock of a Mutex this thread does not hold");
    s.writer = false;
  }
  ++s.releases;
  pthread_cond_broadcast(&s.changed);
}

void Acquire(MutexState& s, bool read) {
  pthread_mutex_lock(&s.m);
  AcquireLocked(s, read);
  pthread_mutex_unlock(&s.m);
}

void Release(MutexState& s, bool read) {
  pthread_mutex_lock(&s.m);
  ReleaseLocked(s, read);
  pthread_mutex_unlock(&s.m);
}

// Holding the lock in mode `read`: returns once `cond` holds (true) or the
// deadline passed (false), holding the lock again in the same mode.
bool AwaitHeld(MutexState& s, const absl::Condition* cond, bool read, const timespec* deadline) {
  for (;;) {
    if (cond == nullptr || cond->Eval()) return true;
    pthread_mutex_lock(&s.m);
    ReleaseLocked(s, read);
    // Our own release counts one; wait for someone else's.
    const uint64_t seen = s.releases;
    bool in_time = true;
    while (s.releases == seen && in_time) in_time = WaitUntil(&s.changed, &s.m, deadline);
    AcquireLocked(s, read);
    pthread_mutex_unlock(&s.m);
    if (!in_time) return cond->Eval();
  }
}

timespec DeadlineAfter(absl::Duration d) { return absl::ToTimespec(absl::Now() + d); }

bool LockWhenCommon(absl::Mutex* mu, const absl::Condition& cond, bool read, const timespec* deadline) {
  MutexState& s = *Mutexes().Get(mu);
  Acquire(s, read);
  return AwaitHeld(s, &cond, read, deadline);
}

// The mode in which the calling thread holds `s` (it must hold it).
bool HeldForReading(const MutexState& s) { return !HeldAsWriterBySelf(s); }

bool AwaitHeldBySelf(absl::Mutex* mu, const absl::Condition& cond, const timespec* deadline) {
  MutexState& s = *Mutexes().Get(mu);
  pthread_mutex_lock(&s.m);
  const bool read = HeldForReading(s);
  pthread_mutex_unlock(&s.m);
  return AwaitHeld(s, &cond, read, deadline);
}

bool CondVarWait(absl::CondVar* cv, absl::Mutex* mu, const timespec* deadline) {
  CondVarState& c = *CondVars().Get(cv);
  MutexState& s = *Mutexes().Get(mu);
  pthread_mutex_lock(&s.m);
  const bool read = HeldForReading(s);
  pthread_mutex_unlock(&s.m);
  // Taking c.m before releasing mu: a Signal after the release is not lost.
  pthread_mutex_lock(&c.m);
  Release(s, read);
  const uint64_t seen = c.signals;
  bool in_time = true;
  while (c.signals == seen && in_time) in_time = WaitUntil(&c.signalled, &c.m, deadline);
  pthread_mutex_unlock(&c.m);
  Acquire(s, read);
  return !in_time;  // abseil: true when the wait timed out
}

// The library's definition of a function this file replaces.
template <typename F>
F Real(const char* mangled) {
  void* f = dlsym(RTLD_NEXT, mangled);
  if (f == nullptr) Die(mangled);
  return reinterpret_cast<F>(f);
}

// Notification's flag: the member after its Mutex.
void* NotifiedFlag(const absl::Notification* n) {
  return const_cast<char*>(reinterpret_cast<const char*>(n)) + sizeof(absl::Mutex);
}

void Notify(absl::CondVar* cv) {
  CondVarState& c = *CondVars().Get(cv);
  pthread_mutex_lock(&c.m);
  ++c.signals;
  pthread_cond_broadcast(&c.signalled);
  pthread_mutex_unlock(&c.m);
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() { Acquire(*Mutexes().Get(this), false); }
void Mutex::Unlock() { Release(*Mutexes().Get(this), false); }
void Mutex::ReaderLock() { Acquire(*Mutexes().Get(this), true); }
void Mutex::ReaderUnlock() { Release(*Mutexes().Get(this), true); }

bool Mutex::TryLock() {
  MutexState& s = *Mutexes().Get(this);
  pthread_mutex_lock(&s.m);
  const bool free = !s.writer && s.readers == 0;
  if (free) {
    s.writer = true;
    s.owner = pthread_self();
  }
  pthread_mutex_unlock(&s.m);
  return free;
}

bool Mutex::ReaderTryLock() {
  MutexState& s = *Mutexes().Get(this);
  pthread_mutex_lock(&s.m);
  const bool free = !s.writer;
  if (free) ++s.readers;
  pthread_mutex_unlock(&s.m);
  return free;
}

void Mutex::LockWhen(const Condition& cond) { LockWhenCommon(this, cond, false, nullptr); }
void Mutex::ReaderLockWhen(const Condition& cond) { LockWhenCommon(this, cond, true, nullptr); }
bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  const timespec deadline = DeadlineAfter(timeout);
  return LockWhenCommon(this, cond, false, &deadline);
}
bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  const timespec ts = ToTimespec(deadline);
  return LockWhenCommon(this, cond, false, &ts);
}
bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, Duration timeout) {
  const timespec deadline = DeadlineAfter(timeout);
  return LockWhenCommon(this, cond, true, &deadline);
}
bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, Time deadline) {
  const timespec ts = ToTimespec(deadline);
  return LockWhenCommon(this, cond, true, &ts);
}

void Mutex::Await(const Condition& cond) { AwaitHeldBySelf(this, cond, nullptr); }
bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  const timespec deadline = DeadlineAfter(timeout);
  return AwaitHeldBySelf(this, cond, &deadline);
}
bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  const timespec ts = ToTimespec(deadline);
  return AwaitHeldBySelf(this, cond, &ts);
}

void Mutex::AssertHeld() const {
  MutexState& s = *Mutexes().Get(this);
  pthread_mutex_lock(&s.m);
  const bool held = HeldAsWriterBySelf(s);
  pthread_mutex_unlock(&s.m);
  if (!held) Die("AssertHeld: this thread does not hold the Mutex");
}
void Mutex::AssertReaderHeld() const {
  MutexState& s = *Mutexes().Get(this);
  pthread_mutex_lock(&s.m);
  const bool held = s.writer || s.readers > 0;
  pthread_mutex_unlock(&s.m);
  if (!held) Die("AssertReaderHeld: the Mutex is not held");
}
void Mutex::AssertNotHeld() const {
  MutexState& s = *Mutexes().Get(this);
  pthread_mutex_lock(&s.m);
  const bool held = HeldAsWriterBySelf(s);
  pthread_mutex_unlock(&s.m);
  if (held) Die("AssertNotHeld: this thread holds the Mutex");
}

// Debugging aids of the real implementation that touch its own state.
void Mutex::EnableDebugLog(const char*) {}
void Mutex::EnableInvariantDebugging(void (*)(void*), void*) {}
void Mutex::ForgetDeadlockInfo() {}

Mutex::~Mutex() { Mutexes().Erase(this); }

void CondVar::Wait(Mutex* mu) { CondVarWait(this, mu, nullptr); }
bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  const timespec deadline = DeadlineAfter(timeout);
  return CondVarWait(this, mu, &deadline);
}
bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  const timespec ts = ToTimespec(deadline);
  return CondVarWait(this, mu, &ts);
}
void CondVar::Signal() { Notify(this); }
void CondVar::SignalAll() { Notify(this); }
void CondVar::EnableDebugLog(const char*) {}
CondVar::~CondVar() { CondVars().Erase(this); }

void Notification::Notify() {
  static const auto real = Real<void (*)(Notification*)>("_ZN4absl7debian312Notification6NotifyEv");
  __tsan_release(NotifiedFlag(this));
  real(this);
}
void Notification::WaitForNotification() const {
  static const auto real =
      Real<void (*)(const Notification*)>("_ZNK4absl7debian312Notification19WaitForNotificationEv");
  real(this);
  __tsan_acquire(NotifiedFlag(this));
}
bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  static const auto real = Real<bool (*)(const Notification*, Duration)>(
      "_ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE");
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(NotifiedFlag(this));
  return notified;
}
bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  static const auto real = Real<bool (*)(const Notification*, Time)>(
      "_ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE");
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(NotifiedFlag(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
