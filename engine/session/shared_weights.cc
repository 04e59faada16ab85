#include "session/shared_weights.h"

#include <cstring>
#include <map>

#include "absl/synchronization/mutex.h"

namespace onyx {

class SharedWeightsGroup {
 public:
  // Returns the group's tensor equal to `t` under `name`, registering `t` if new.
  Tensor Intern(const std::string& name, const Tensor& t) {
    absl::MutexLock lock(&mu_);
    auto range = tensors_.equal_range(name);
    for (auto it = range.first; it != range.second; ++it) {
      const Tensor& known = it->second;
      if (known.type() != t.type() || known.dims() != t.dims()) continue;
      if (t.type() == DataType::kString) {
        bool equal = true;
        for (int64_t i = 0; i < t.num_elements() && equal; ++i) {
          equal = known.data<std::string>()[i] == t.data<std::string>()[i];
        }
        if (equal) return known;
      } else if (std::memcmp(known.raw(), t.raw(), t.byte_size()) == 0) {
        return known;
      }
    }
    tensors_.emplace(name, t);
    return t;
  }
  size_t size() {
    absl::MutexLock lock(&mu_);
    return tensors_.size();
  }

 private:
  absl::Mutex mu_;
  std::multimap<std::string, Tensor> tensors_ ABSL_GUARDED_BY(mu_);
};

namespace {

struct Registry {
  absl::Mutex mu;
  std::map<std::string, std::weak_ptr<SharedWeightsGroup>> groups ABSL_GUARDED_BY(mu);
};

Registry& Groups() {
  static Registry* registry = new Registry();
  return *registry;
}

void InternAll(SharedWeightsGroup& group, Graph& graph, const std::string& scope) {
  std::vector<std::pair<std::string, Tensor>> replaced;
  for (const auto& [name, t] : graph.initializers()) replaced.emplace_back(name, group.Intern(scope + name, t));
  for (auto& [name, t] : replaced) graph.SetInitializer(name, std::move(t));
  for (Node* n : graph.Nodes()) {
    for (auto& [attr, sub] : n->subgraphs) InternAll(group, *sub, scope + n->Label() + "/" + attr + "/");
  }
}

}  // namespace

std::shared_ptr<SharedWeightsGroup> ShareWeights(const std::string& name, Graph& graph) {
  std::shared_ptr<SharedWeightsGroup> group;
  {
    Registry& r = Groups();
    absl::MutexLock lock(&r.mu);
    group = r.groups[name].lock();
    if (group == nullptr) {
      group = std::make_shared<SharedWeightsGroup>();
      r.groups[name] = group;
    }
  }
  InternAll(*group, graph, "");
  return group;
}

size_t SharedWeightsCount(const std::string& name) {
  std::shared_ptr<SharedWeightsGroup> group;
  {
    Registry& r = Groups();
    absl::MutexLock lock(&r.mu);
    auto it = r.groups.find(name);
    if (it != r.groups.end()) group = it->second.lock();
  }
  return group ? group->size() : 0;
}

}  // namespace onyx
