// Weights reordered into a oneDNN primitive's layout, shared by every kernel
// that packs the same source bytes into the same layout. A server's bucket
// sessions of one model share their initializers (engine/session/
// shared_weights.h), so their convolutions and matmuls share one packed copy
// instead of one per bucket. An entry lives while a kernel holds it.
//
// A source is identified by its address and the owner of its buffer, held
// weakly: the owner's control block outlives the bytes, so a later buffer at
// the same address can never pass for it, and a kernel that keeps only a
// packed copy lets the session release the plain one (OpKernel::
// PackedConstantInputs) yet still finds or makes the other layouts it needs
// by reordering its copy. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "onyx/tensor.h"

namespace onyx {

// Which plain matrix a packed copy holds: `source`'s bytes read as `desc`.
// Keeps a view (a tensor without owner) alive, never an owned buffer.
class WeightSource {
 public:
  WeightSource() = default;
  WeightSource(const Tensor& source, const dnnl::memory::desc& desc);

  bool SameAs(const WeightSource& other) const;
  const dnnl::memory::desc& desc() const { return desc_; }

 private:
  const void* address_ = nullptr;
  size_t bytes_ = 0;
  std::weak_ptr<void> owner_;
  Tensor view_;  // only for a source without owner
  dnnl::memory::desc desc_;
};

// `source` (laid out as `source_desc`) reordered into `packed_desc`: the
// existing copy when a live kernel already made it from the same bytes read
// in the same layout, else a new one.
absl::StatusOr<std::shared_ptr<const dnnl::memory>> PackedWeights(const Tensor& source,
                                                                  const dnnl::memory::desc& source_desc,
                                                                  const dnnl::memory::desc& packed_desc);

// The same for a source that may be gone: `from` holds its values in any
// layout (a packed copy made earlier) and is reordered when no live copy in
// `packed_desc` exists.
absl::StatusOr<std::shared_ptr<const dnnl::memory>> PackedWeights(const WeightSource& source, const dnnl::memory& from,
                                                                  const dnnl::memory::desc& packed_desc);

struct PackedWeightsStats {
  size_t entries = 0;  // live packed copies
  size_t bytes = 0;    // their total size
};
PackedWeightsStats LivePackedWeights();

}  // namespace onyx
