#include "providers/cpu/nn/packed_weights.h"

#include <optional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "onyx/status_macros.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {
namespace {

struct Entry {
  WeightSource source;
  dnnl::memory::desc packed_desc;
  dnnl::memory packed;
};

struct Registry {
  absl::Mutex mu;
  std::vector<std::weak_ptr<Entry>> entries ABSL_GUARDED_BY(mu);
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

}  // namespace

WeightSource::WeightSource(const Tensor& source, const dnnl::memory::desc& desc)
    : address_(source.raw()), bytes_(source.byte_size()), owner_(source.owner()), desc_(desc) {
  if (source.owner() == nullptr) view_ = source;
}

bool WeightSource::SameAs(const WeightSource& other) const {
  // Equivalent owners: neither orders before the other (the same control
  // block, or both empty — views, whose callers keep the bytes in place).
  return address_ == other.address_ && bytes_ == other.bytes_ && !owner_.owner_before(other.owner_) &&
         !other.owner_.owner_before(owner_) && desc_ == other.desc_;
}

absl::StatusOr<std::shared_ptr<const dnnl::memory>> PackedWeights(const Tensor& source,
                                                                  const dnnl::memory::desc& source_desc,
                                                                  const dnnl::memory::desc& packed_desc) {
  std::optional<dnnl::memory> plain;
  RETURN_IF_ERROR(DnnlGuarded("weight source", [&]() -> absl::Status {
    plain.emplace(source_desc, DnnlCpuEngine(), const_cast<void*>(source.raw()));
    return absl::OkStatus();
  }));
  return PackedWeights(WeightSource(source, source_desc), *plain, packed_desc);
}

absl::StatusOr<std::shared_ptr<const dnnl::memory>> PackedWeights(const WeightSource& source, const dnnl::memory& from,
                                                                  const dnnl::memory::desc& packed_desc) {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  // Expired entries are dropped on the way.
  std::shared_ptr<Entry> found;
  for (size_t i = 0; i < r.entries.size();) {
    std::shared_ptr<Entry> e = r.entries[i].lock();
    if (e == nullptr) {
      r.entries[i] = r.entries.back();
      r.entries.pop_back();
      continue;
    }
    if (e->source.SameAs(source) && e->packed_desc == packed_desc) found = std::move(e);
    ++i;
  }
  if (found == nullptr) {
    auto entry = std::make_shared<Entry>();
    entry->source = source;
    entry->packed_desc = packed_desc;
    RETURN_IF_ERROR(DnnlGuarded("weight reorder", [&]() -> absl::Status {
      entry->packed = dnnl::memory(packed_desc, DnnlCpuEngine());
      dnnl::reorder(from, entry->packed).execute(DnnlThreadStream(), const_cast<dnnl::memory&>(from), entry->packed);
      DnnlThreadStream().wait();
      return absl::OkStatus();
    }));
    r.entries.push_back(entry);
    found = std::move(entry);
  }
  // Aliasing: the caller holds the entry through its memory.
  return std::shared_ptr<const dnnl::memory>(found, &found->packed);
}

PackedWeightsStats LivePackedWeights() {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  PackedWeightsStats stats;
  for (const auto& weak : r.entries) {
    if (std::shared_ptr<Entry> e = weak.lock()) {
      ++stats.entries;
      stats.bytes += e->packed_desc.get_size();
    }
  }
  return stats;
}

}  // namespace onyx
