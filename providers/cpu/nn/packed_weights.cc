#include "providers/cpu/nn/packed_weights.h"

#include <vector>

#include "absl/synchronization/mutex.h"
#include "onyx/status_macros.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {
namespace {

struct Entry {
  Tensor source;                   // keeps the identifying address alive
  dnnl::memory::desc source_desc;  // the same bytes read in another layout are another matrix
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

absl::StatusOr<std::shared_ptr<const dnnl::memory>> PackedWeights(const Tensor& source,
                                                                  const dnnl::memory::desc& source_desc,
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
    if (e->source.raw() == source.raw() && e->source.byte_size() == source.byte_size() &&
        e->source_desc == source_desc && e->packed_desc == packed_desc) {
      found = std::move(e);
    }
    ++i;
  }
  if (found == nullptr) {
    auto entry = std::make_shared<Entry>();
    entry->source = source;
    entry->source_desc = source_desc;
    entry->packed_desc = packed_desc;
    RETURN_IF_ERROR(DnnlGuarded("weight reorder", [&]() -> absl::Status {
      entry->packed = dnnl::memory(packed_desc, DnnlCpuEngine());
      dnnl::memory plain(source_desc, DnnlCpuEngine(), const_cast<void*>(source.raw()));
      dnnl::reorder(plain, entry->packed).execute(DnnlThreadStream(), plain, entry->packed);
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
