// The TSan build's check on tests/util/tsan_absl_sync.cc (run by
// scripts/sanitize.sh thread): data handed over under an absl::Mutex and
// through an absl::Notification must not be reported, and with an argument
// an unsynchronized increment from two threads must be. Without the shim
// the first part reports races; a shim that hid everything would miss the
// second.
#include <cstdio>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace {

absl::Mutex mu;
int guarded = 0;
int handed = 0;
int unguarded = 0;

}  // namespace

int main(int argc, char**) {
  auto locked = [] {
    for (int i = 0; i < 1000; ++i) {
      absl::MutexLock lock(&mu);
      ++guarded;
    }
  };
  std::thread a(locked), b(locked);
  a.join();
  b.join();
  absl::Notification ready;
  std::thread c([&] {
    handed = 42;
    ready.Notify();
  });
  ready.WaitForNotification();
  std::printf("handed %d, guarded %d\n", handed, guarded);
  c.join();
  if (argc > 1) {  // the race TSan must report
    std::thread d([] { ++unguarded; }), e([] { ++unguarded; });
    d.join();
    e.join();
  }
  return handed == 42 && guarded == 2000 ? 0 : 1;
}
