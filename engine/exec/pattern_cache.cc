#include "exec/pattern_cache.h"

namespace onyx {

std::shared_ptr<const LearnedPattern> PatternCache::Find(const std::string& signature) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(signature);
  if (it == entries_.end()) return nullptr;
  recency_.splice(recency_.begin(), recency_, it->second.second);
  return it->second.first;
}

void PatternCache::Insert(const std::string& signature, std::shared_ptr<const LearnedPattern> pattern) {
  absl::MutexLock lock(&mu_);
  if (capacity_ == 0 || entries_.count(signature)) return;
  recency_.push_front(signature);
  entries_[signature] = {std::move(pattern), recency_.begin()};
  while (entries_.size() > capacity_) {
    entries_.erase(recency_.back());
    recency_.pop_back();
  }
}

size_t PatternCache::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace onyx
