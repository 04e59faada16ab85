#include "common/logging.h"

#include "spdlog/sinks/stdout_color_sinks.h"

namespace onyx {

std::shared_ptr<spdlog::logger> EngineLogger() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto existing = spdlog::get("onyx.engine");
    if (existing) return existing;
    auto created = std::make_shared<spdlog::logger>("onyx.engine", spdlog::default_logger()->sinks().begin(),
                                                    spdlog::default_logger()->sinks().end());
    created->set_level(spdlog::default_logger()->level());
    spdlog::register_logger(created);
    return created;
  }();
  return logger;
}

bool ShouldLog(LogLevel run_level, spdlog::level::level_enum severity) {
  switch (run_level) {
    case LogLevel::kDefault: return EngineLogger()->should_log(severity);
    case LogLevel::kTrace: return severity >= spdlog::level::trace;
    case LogLevel::kDebug: return severity >= spdlog::level::debug;
    case LogLevel::kInfo: return severity >= spdlog::level::info;
    case LogLevel::kWarn: return severity >= spdlog::level::warn;
    case LogLevel::kError: return severity >= spdlog::level::err;
    case LogLevel::kOff: return false;
  }
  return false;
}

}  // namespace onyx
