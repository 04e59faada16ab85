// Learned memory patterns of one session, by input-shape signature, in a
// bounded LRU cache so that ever-changing shapes cannot grow memory without
// limit. Thread-safe.
#pragma once

#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "planner/memory_pattern.h"

namespace onyx {

struct LearnedPattern {
  MemoryPattern pattern;  // ids are value slots
  // Sum of the planned buffers without reuse, and the number of them.
  size_t bytes_without_reuse = 0;
  // Outputs computed in place over a dying input (same offset): not zero-filled.
  std::set<int> inplace_slots;
};

class PatternCache {
 public:
  explicit PatternCache(size_t capacity) : capacity_(capacity) {}

  std::shared_ptr<const LearnedPattern> Find(const std::string& signature) ABSL_LOCKS_EXCLUDED(mu_);
  void Insert(const std::string& signature, std::shared_ptr<const LearnedPattern> pattern) ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<std::string> recency_ ABSL_GUARDED_BY(mu_);  // most recent first
  std::map<std::string, std::pair<std::shared_ptr<const LearnedPattern>, std::list<std::string>::iterator>> entries_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx
