#include "optimizer/split_conv_over_concat.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph/op_domains.h"

namespace onyx {
namespace {

bool IsOnyxOp(const Node* n, const char* op_type) {
  return n != nullptr && n->domain == kOnyxDomain && n->op_type == op_type;
}

const ValueInfo* Rank4Float(const Graph& graph, const std::string& value) {
  const ValueInfo* info = graph.FindValueInfo(value);
  if (info == nullptr || info->kind != ValueInfo::Kind::kTensor || info->type != DataType::kFloat || !info->has_shape ||
      info->dims.size() != 4) {
    return nullptr;
  }
  return info;
}

// A node of `from`'s op, domain, version and attributes, to fill in.
std::unique_ptr<Node> LikeNode(const Node& from) {
  auto n = std::make_unique<Node>();
  n->op_type = from.op_type;
  n->domain = from.domain;
  n->since_version = from.since_version;
  n->attributes = from.attributes;
  n->provider = from.provider;
  return n;
}

class Splitter {
 public:
  explicit Splitter(Graph& graph) : graph_(graph) {
    for (const Node* n : graph.Nodes()) {
      for (const auto& [attr, sub] : n->subgraphs) {
        for (const std::string& v : sub->OuterScopeValues()) implicit_uses_.insert(v);
      }
    }
  }

  bool Run() {
    bool changed = false;
    // Pools first: the Concat they leave behind may then feed a convolution.
    // By index, as nodes come and go (a node added is visited too: a Concat
    // of Concats splits again).
    for (size_t i = 0; i < graph_.NodeCapacity(); ++i) {
      Node* n = graph_.node(i);
      if (IsOnyxOp(n, "NhwcMaxPool") || IsOnyxOp(n, "NhwcAveragePool")) changed |= SplitPool(*n);
    }
    for (size_t i = 0; i < graph_.NodeCapacity(); ++i) {
      Node* n = graph_.node(i);
      if (IsOnyxOp(n, "NhwcConv")) changed |= SplitConv(*n);
    }
    return changed;
  }

 private:
  // The channels-last Concat (axis 3 of a rank-4 float tensor, every input
  // rank-4 float) that `reader` alone reads as its input 0, or nullptr.
  Node* ConcatReadOnlyBy(const Node& reader) {
    if (reader.inputs.empty() || implicit_uses_.count(reader.inputs[0]) > 0) return nullptr;
    Node* concat = graph_.Producer(reader.inputs[0]);
    if (!IsOp(concat, "Concat") || concat->outputs.size() != 1 || concat->inputs.size() < 2) return nullptr;
    if (SoleConsumer(graph_, concat->outputs[0]) != &reader || Rank4Float(graph_, concat->outputs[0]) == nullptr) {
      return nullptr;
    }
    const onnx::AttributeProto* axis = concat->FindAttribute("axis");
    if (axis == nullptr || (axis->i() != 3 && axis->i() != -1)) return nullptr;
    for (const std::string& in : concat->inputs) {
      if (in.empty() || Rank4Float(graph_, in) == nullptr) return nullptr;
    }
    return concat;
  }

  // `info` renamed, with `channels` channels.
  void DeclareLike(const ValueInfo& info, const std::string& name, int64_t channels) {
    ValueInfo out = info;
    out.name = name;
    out.dims[3] = channels;
    if (out.dim_params.size() == 4) out.dim_params[3].clear();
    graph_.SetValueInfo(name, out);
  }

  bool SplitPool(Node& pool) {
    if (pool.outputs.size() != 1) return false;
    Node* concat = ConcatReadOnlyBy(pool);
    const ValueInfo* pooled = concat != nullptr ? Rank4Float(graph_, pool.outputs[0]) : nullptr;
    if (pooled == nullptr) return false;
    const ValueInfo pooled_info = *pooled;
    std::vector<std::string> parts;
    for (const std::string& in : concat->inputs) {
      auto part = LikeNode(pool);
      part->name = graph_.UniqueValueName((pool.name.empty() ? pool.op_type : pool.name) + "_part");
      part->inputs = {in};
      part->outputs = {graph_.UniqueValueName(in + "_pooled")};
      DeclareLike(pooled_info, part->outputs[0], graph_.FindValueInfo(in)->dims[3]);
      parts.push_back(part->outputs[0]);
      graph_.AddNode(std::move(part));
    }
    concat->inputs = parts;
    concat->outputs = pool.outputs;
    graph_.RemoveNode(pool.index);
    return true;
  }

  bool SplitConv(Node& conv) {
    // X, W, B?: a convolution that already adds a residual keeps its node.
    if (conv.inputs.size() < 2 || conv.inputs.size() > 3 || conv.outputs.size() != 1) return false;
    const onnx::AttributeProto* group = conv.FindAttribute("group");
    if (group != nullptr && group->i() != 1) return false;
    Node* concat = ConcatReadOnlyBy(conv);
    const Tensor* w = concat != nullptr ? ConstantValue(graph_, conv.inputs[1]) : nullptr;
    const ValueInfo* out = Rank4Float(graph_, conv.outputs[0]);
    if (w == nullptr || out == nullptr || w->type() != DataType::kFloat || w->rank() != 4) return false;
    const Dims& wd = w->dims();
    std::vector<int64_t> channels;
    int64_t total = 0;
    for (const std::string& in : concat->inputs) {
      const int64_t c = graph_.FindValueInfo(in)->dims[3];
      if (c <= 0) return false;
      channels.push_back(c);
      total += c;
    }
    if (total != wd[1]) return false;
    // Each extra input reads and writes the M-channel partial sum once; the
    // Concat writes its C channels once and the convolution reads them again.
    const int64_t extra = static_cast<int64_t>(channels.size()) - 1;
    if (wd[0] * extra >= total) return false;

    const ValueInfo out_info = *out;
    const std::string bias = conv.inputs.size() > 2 ? conv.inputs[2] : "";
    const int64_t taps = wd[2] * wd[3];
    std::string partial;
    int64_t first = 0;
    for (size_t i = 0; i < channels.size(); ++i) {
      Tensor slice = Tensor::Allocate(DataType::kFloat, {wd[0], channels[i], wd[2], wd[3]});
      const float* src = w->data<float>();
      float* dst = slice.mutable_data<float>();
      for (int64_t m = 0; m < wd[0]; ++m) {
        std::copy(src + (m * wd[1] + first) * taps, src + (m * wd[1] + first + channels[i]) * taps,
                  dst + m * channels[i] * taps);
      }
      first += channels[i];
      const std::string w_name = graph_.UniqueValueName(conv.inputs[1] + "_part");
      ValueInfo w_info;
      w_info.name = w_name;
      w_info.type = DataType::kFloat;
      w_info.has_shape = true;
      w_info.dims.assign(slice.dims().begin(), slice.dims().end());
      w_info.dim_params.assign(4, "");
      graph_.SetInitializer(w_name, std::move(slice));
      graph_.SetValueInfo(w_name, w_info);

      const bool last = i + 1 == channels.size();
      auto part = LikeNode(conv);
      part->name = graph_.UniqueValueName((conv.name.empty() ? conv.op_type : conv.name) + "_part");
      part->inputs = {concat->inputs[i], w_name, i == 0 ? bias : "", partial};
      if (i == 0) part->inputs.resize(bias.empty() ? 2 : 3);
      if (last) {
        part->outputs = conv.outputs;
      } else {
        part->attributes.erase("activation");
        part->attributes.erase("activation_params");
        part->outputs = {graph_.UniqueValueName(conv.outputs[0] + "_partial")};
        DeclareLike(out_info, part->outputs[0], wd[0]);
      }
      partial = part->outputs[0];
      graph_.AddNode(std::move(part));
    }
    graph_.RemoveNode(conv.index);
    graph_.RemoveNode(concat->index);
    return true;
  }

  Graph& graph_;
  std::set<std::string> implicit_uses_;  // values subgraphs read from this graph
};

}  // namespace

absl::StatusOr<bool> SplitConvOverConcat::ApplyImpl(Graph& graph) const {
  if (graph.parent() != nullptr) return false;
  return Splitter(graph).Run();
}

}  // namespace onyx
