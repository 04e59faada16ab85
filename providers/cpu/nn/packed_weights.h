// Weights reordered into a oneDNN primitive's layout, shared by every kernel
// that packs the same source bytes into the same layout. A server's bucket
// sessions of one model share their initializers (engine/session/
// shared_weights.h), so their convolutions and matmuls share one packed copy
// instead of one per bucket. An entry lives while a kernel holds it; it keeps
// its source tensor alive, so the address that identifies it cannot be
// reused for other bytes meanwhile. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "onyx/tensor.h"

namespace onyx {

// `source` (laid out as `source_desc`) reordered into `packed_desc`: the
// existing copy when a live kernel already made it from the same bytes read
// in the same layout, else a new one.
absl::StatusOr<std::shared_ptr<const dnnl::memory>> PackedWeights(const Tensor& source,
                                                                  const dnnl::memory::desc& source_desc,
                                                                  const dnnl::memory::desc& packed_desc);

struct PackedWeightsStats {
  size_t entries = 0;  // live packed copies
  size_t bytes = 0;    // their total size
};
PackedWeightsStats LivePackedWeights();

}  // namespace onyx
