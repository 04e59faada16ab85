// YAML configuration: the same text as onyxd's server.yaml and as a model's
// config.yaml (parsed, then completed for a model with and without a batch
// dimension). Any text must end in a config or a Status naming the file.
#include "absl/strings/string_view.h"

#include "server/config/model_config.h"
#include "server/config/server_config.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using onyx::fuzz::Require;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto server = onyx::server::ParseServerConfig(text, "fuzz/server.yaml");
  if (server.ok()) {
    onyx::fuzz::Accepted();
  } else {
    Require(server.status().message().find("fuzz/server.yaml") != absl::string_view::npos,
            "a server.yaml error that does not name the file");
  }
  auto file = onyx::server::ParseModelConfig(text, "fuzz/config.yaml");
  if (!file.ok()) {
    Require(file.status().message().find("fuzz/config.yaml") != absl::string_view::npos,
            "a config.yaml error that does not name the file");
    return 0;
  }
  for (absl::string_view batch_problem : {"", "input 'x' has fixed first dimension 3"}) {
    auto config = onyx::server::ResolveModelConfig(*file, batch_problem, "fuzz/config.yaml");
    if (config.ok()) {
      onyx::fuzz::Accepted();
      Require(config->max_batch_size >= 0, "a resolved negative max_batch_size");
      Require(batch_problem.empty() || config->max_batch_size == 0,
              "batching resolved on for a model without a batch dimension");
    }
  }
  return 0;
}
