#include "framework/stream.h"

#include <deque>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace onyx {
namespace {

class ThreadStream final : public Stream {
 public:
  ThreadStream() : worker_([this] { Loop(); }) {}
  ~ThreadStream() override {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    worker_.join();
  }
  void Submit(std::function<void()> work) override {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(work));
  }

 private:
  void Loop() {
    while (true) {
      std::function<void()> work;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](ThreadStream* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) { return s->stopping_ || !s->queue_.empty(); },
            this));
        if (queue_.empty()) return;
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace

std::unique_ptr<Stream> MakeThreadStream() { return std::make_unique<ThreadStream>(); }

}  // namespace onyx
