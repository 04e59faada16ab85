// The engine's logger ("onyx.engine", spdlog). Applications configure spdlog's
// default level and sinks; a run may ask for more (or less) detail than that
// through RunOptions::log_level.
#pragma once

#include <memory>

#include "onyx/run_options.h"
#include "spdlog/spdlog.h"

namespace onyx {

std::shared_ptr<spdlog::logger> EngineLogger();

// Whether a message of `severity` is emitted for a run with `run_level`:
// the run's level when set, the logger's otherwise.
bool ShouldLog(LogLevel run_level, spdlog::level::level_enum severity);

// Emits even when the logger's own level would filter it (the run asked).
template <typename... Args>
void RunLog(LogLevel run_level, spdlog::level::level_enum severity, spdlog::format_string_t<Args...> format,
            Args&&... args) {
  if (!ShouldLog(run_level, severity)) return;
  auto logger = EngineLogger();
  logger->log(std::max(severity, logger->level()), format, std::forward<Args>(args)...);
}

}  // namespace onyx
