// RunOptions: per-run settings of InferenceSession::Run (log detail, arena
// shrinking, cancellation), and the log levels the engine's logger knows.
// Plain data; thread-compatible.
#pragma once

#include <atomic>
#include <string>

namespace onyx {

// Log detail for one run; kDefault follows the engine logger's level.
enum class LogLevel { kDefault, kTrace, kDebug, kInfo, kWarn, kError, kOff };

struct RunOptions {
  std::string run_tag;
  // kTrace logs every node with its time; kDebug the run's start and end.
  LogLevel log_level = LogLevel::kDefault;
  // After this run, return the arenas' fully free regions to the system
  // (for a burst of large requests; steady traffic keeps them warm).
  bool shrink_arena_at_end = false;
  // When set and true, Run() stops between nodes and returns CANCELLED.
  const std::atomic<bool>* terminate = nullptr;
};

}  // namespace onyx
