#include "optimizer/nhwc_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/op_domains.h"
#include "onnx/defs/schema.h"
#include "optimizer/fuse_conv_activation.h"

namespace onyx {
namespace {

constexpr int64_t kToNhwc[4] = {0, 2, 3, 1};  // Transpose perm NCHW -> NHWC
constexpr int64_t kToNchw[4] = {0, 3, 1, 2};  // and back

bool HasPerm(const Node& n, const int64_t (&perm)[4]) {
  const onnx::AttributeProto* a = n.FindAttribute("perm");
  if (a == nullptr || a->ints_size() != 4) return false;
  for (int i = 0; i < 4; ++i) {
    if (a->ints(i) != perm[i]) return false;
  }
  return true;
}

const ValueInfo* Rank4Info(const Graph& graph, const std::string& value) {
  const ValueInfo* info = graph.FindValueInfo(value);
  if (info == nullptr || info->kind != ValueInfo::Kind::kTensor || !info->has_shape || info->dims.size() != 4) {
    return nullptr;
  }
  return info;
}

bool IsRank4Float(const Graph& graph, const std::string& value) {
  const ValueInfo* info = Rank4Info(graph, value);
  return info != nullptr && info->type == DataType::kFloat;
}

ValueInfo ToNhwc(const ValueInfo& nchw, const std::string& name) {
  ValueInfo out = nchw;
  out.name = name;
  for (int i = 0; i < 4; ++i) {
    out.dims[i] = nchw.dims[kToNhwc[i]];
    if (nchw.dim_params.size() == 4) out.dim_params[i] = nchw.dim_params[kToNhwc[i]];
  }
  return out;
}

int64_t IntAttr(const Node& n, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = n.FindAttribute(name);
  return a != nullptr ? a->i() : fallback;
}

onnx::AttributeProto IntAttribute(const char* name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto IntsAttribute(const char* name, const std::vector<int64_t>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

// Ops that compute each output element from the same element of their one
// data input (input 0; Clip's bounds are scalars and stay as they are).
bool IsUnaryElementwise(const Node& n) {
  static const std::set<std::string> kOps = {"Relu",      "LeakyRelu",
                                             "Sigmoid",   "HardSigmoid",
                                             "HardSwish", "Tanh",
                                             "Clip",      "Elu",
                                             "Selu",      "Celu",
                                             "Softplus",  "Softsign",
                                             "Exp",       "Log",
                                             "Abs",       "Neg",
                                             "Sqrt",      "Reciprocal",
                                             "Erf",       "Floor",
                                             "Ceil",      "Round",
                                             "Sin",       "Cos",
                                             "Mish",      "ThresholdedRelu",
                                             "Sign",      "Identity",
                                             "Gelu"};
  if (n.domain == kOnyxDomain) return n.op_type == "Gelu";
  return n.domain.empty() && kOps.count(n.op_type) > 0;
}

// Ops with numpy broadcasting over all inputs: their operands can all be
// permuted the same way.
bool IsBroadcastElementwise(const Node& n) {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean", "Pow", "PRelu"};
  return n.domain.empty() && kOps.count(n.op_type) > 0 && !HasLegacyBroadcast(n);
}

// True when `dilations` is absent or all 1.
bool Undilated(const Node& n) {
  const onnx::AttributeProto* d = n.FindAttribute("dilations");
  return d == nullptr || std::all_of(d->ints().begin(), d->ints().end(), [](int64_t v) { return v == 1; });
}

// The convolutions com.onyx NchwToNhwcConv runs (its kernel's limits,
// providers/cpu/simd/stem_conv.h): ungrouped, undilated, at most 4 input
// channels and 256 taps per output; an image network's first layer.
bool IsStemConv(const Node& n, const Tensor& w) {
  constexpr int64_t kMaxChannels = 4, kMaxTaps = 256;
  if (IntAttr(n, "group", 1) != 1) return false;
  if (!Undilated(n)) return false;
  const Dims& wd = w.dims();
  return wd[1] <= kMaxChannels && wd[1] * wd[2] * wd[3] <= kMaxTaps;
}

class Rewriter {
 public:
  explicit Rewriter(Graph& graph) : graph_(graph) {
    for (const Node* n : graph.Nodes()) {
      for (const auto& [attr, sub] : n->subgraphs) {
        for (const std::string& v : sub->OuterScopeValues()) implicit_uses_.insert(v);
      }
    }
    const int64_t opset = graph.OpsetFor("");
    const onnx::OpSchema* schema =
        opset > 0 ? onnx::OpSchemaRegistry::Schema("Transpose", static_cast<int>(opset), "") : nullptr;
    transpose_version_ = schema != nullptr ? schema->since_version() : 1;
  }

  bool Run() {
    auto order = graph_.TopologicalOrder();
    if (!order.ok()) return false;
    for (Node* n : *order) Visit(*n);
    if (!changed_) return false;
    LeaveLayout();
    RemoveDeadTransposes();
    return true;
  }

 private:
  void Visit(Node& n) {
    if (IsOp(&n, "Transpose") && HasPerm(n, kToNchw) && Rank4Info(graph_, n.inputs[0]) != nullptr) {
      // The model leaves channels-last itself: its input is the NHWC form.
      if (nhwc_.count(n.outputs[0]) == 0) Record(n.outputs[0], n.inputs[0]);
      return;
    }
    if (IsOp(&n, "Transpose") && HasPerm(n, kToNhwc) && nhwc_.count(n.inputs[0]) > 0 &&
        !graph_.IsOutput(n.outputs[0]) && implicit_uses_.count(n.outputs[0]) == 0) {
      // Entering the layout a value already has: read that instead.
      ReplaceValueUses(graph_, n.outputs[0], nhwc_[n.inputs[0]]);
      graph_.RemoveNode(n.index);
      changed_ = true;
      return;
    }
    if (ConvertConv(n) || ConvertConvTranspose(n) || ConvertBatchNorm(n) || FoldStemPool(n) || ConvertPool(n) ||
        ConvertActivation(n) || ConvertUnary(n) || ConvertBroadcast(n) || ConvertConcat(n) || ConvertResize(n) ||
        ConvertSplit(n) || ConvertSlice(n) || ConvertChannelShuffle(n)) {
      changed_ = true;
    }
  }

  bool Mapped(const std::string& value) const { return !value.empty() && nhwc_.count(value) > 0; }

  // True when `value` is a rank-4 tensor. Callers know the rank from the op
  // (a 2-D convolution's X and Y, the output of an op whose data input is
  // rank 4): a value shape inference left without a shape (a Reshape of a
  // computed shape) gets rank 4 with unknown dims and `type` when untyped.
  bool Rank4(const std::string& value, DataType type) {
    const ValueInfo* info = graph_.FindValueInfo(value);
    if (info != nullptr && info->kind != ValueInfo::Kind::kTensor) return false;
    if (info != nullptr && info->has_shape) return info->dims.size() == 4;
    ValueInfo known = info != nullptr ? *info : ValueInfo{};
    known.name = value;
    if (known.type == DataType::kUndefined) known.type = type;
    known.has_shape = true;
    known.dims.assign(4, -1);
    known.dim_params.assign(4, "");
    graph_.SetValueInfo(value, known);
    return true;
  }

  DataType TypeOf(const std::string& value) const {
    const ValueInfo* info = graph_.FindValueInfo(value);
    return info != nullptr ? info->type : DataType::kUndefined;
  }

  void Record(const std::string& nchw, const std::string& nhwc) {
    nhwc_[nchw] = nhwc;
    recorded_.push_back(nchw);
  }

  // The NHWC form of `value` (rank 4), entering the layout when it has none.
  std::string Nhwc(const std::string& value) {
    auto it = nhwc_.find(value);
    if (it != nhwc_.end()) return it->second;
    const std::string out = graph_.UniqueValueName(value + "_nhwc");
    graph_.SetValueInfo(out, ToNhwc(*Rank4Info(graph_, value), out));
    AddTranspose(value, out, kToNhwc);
    Record(value, out);
    return out;
  }

  void AddTranspose(const std::string& in, const std::string& out, const int64_t (&perm)[4]) {
    auto t = std::make_unique<Node>();
    t->name = graph_.UniqueValueName(out + "_transpose");
    t->op_type = "Transpose";
    t->since_version = transpose_version_;
    t->inputs = {in};
    t->outputs = {out};
    t->attributes["perm"] = IntsAttribute("perm", std::vector<int64_t>(perm, perm + 4));
    graph_.AddNode(std::move(t));
  }

  // Renames output `i` of `n` to a new channels-last value.
  void ProduceNhwc(Node& n, size_t i) {
    const std::string nchw = n.outputs[i];
    const std::string out = graph_.UniqueValueName(nchw + "_nhwc");
    graph_.SetValueInfo(out, ToNhwc(*Rank4Info(graph_, nchw), out));
    n.outputs[i] = out;
    Record(nchw, out);
    renamed_.insert(nchw);
  }

  // A constant broadcast against rank-4 operands, aligned to rank 4 and
  // permuted like them; scalars are returned as they are.
  std::optional<std::string> PermutedConstant(const std::string& value) {
    const Tensor* t = ConstantValue(graph_, value);
    if (t == nullptr || t->rank() > 4 || t->type() == DataType::kString) return std::nullopt;
    if (t->num_elements() == 1) return value;
    Dims in(4 - t->rank(), 1);
    in.insert(in.end(), t->dims().begin(), t->dims().end());
    Dims out(4);
    for (int i = 0; i < 4; ++i) out[i] = in[kToNhwc[i]];
    Tensor permuted = Tensor::Allocate(t->type(), out);
    const size_t size = ElementSize(t->type());
    const int64_t in_strides[4] = {in[1] * in[2] * in[3], in[2] * in[3], in[3], 1};
    const char* src = static_cast<const char*>(t->raw());
    char* dst = static_cast<char*>(permuted.mutable_raw());
    int64_t k = 0;
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b)
        for (int64_t c = 0; c < out[2]; ++c)
          for (int64_t d = 0; d < out[3]; ++d, ++k) {
            const int64_t idx[4] = {a, b, c, d};
            int64_t offset = 0;
            for (int i = 0; i < 4; ++i) offset += idx[i] * in_strides[kToNhwc[i]];
            std::memcpy(dst + k * size, src + offset * size, size);
          }
    return AddInitializer(value + "_nhwc", std::move(permuted));
  }

  std::string AddInitializer(const std::string& hint, Tensor tensor) {
    const std::string name = graph_.UniqueValueName(hint);
    ValueInfo info;
    info.name = name;
    info.type = tensor.type();
    info.has_shape = true;
    info.dims.assign(tensor.dims().begin(), tensor.dims().end());
    info.dim_params.assign(info.dims.size(), "");
    graph_.SetInitializer(name, std::move(tensor));
    graph_.SetValueInfo(name, info);
    return name;
  }

  Node& Replace(Node& old, std::unique_ptr<Node> fresh) {
    graph_.RemoveNode(old.index);
    return *graph_.AddNode(std::move(fresh));
  }

  std::unique_ptr<Node> OnyxNode(const Node& from, const char* op_type) {
    auto n = std::make_unique<Node>();
    n->name = from.name.empty() ? graph_.UniqueValueName(op_type) : from.name;
    n->op_type = op_type;
    n->domain = kOnyxDomain;
    n->outputs = {from.outputs[0]};
    return n;
  }

  bool ConvertConv(Node& n) {
    // ONNX Runtime's com.microsoft FusedConv is com.onyx FusedConv (same
    // inputs, attributes and formula).
    const bool conv = IsOp(&n, "Conv");
    const bool fused = (n.domain == kOnyxDomain || n.domain == kMicrosoftDomain) && n.op_type == "FusedConv";
    if (!conv && !fused) return false;
    if (n.inputs.size() < 2) return false;
    const Tensor* w = ConstantValue(graph_, n.inputs[1]);
    if (w == nullptr || w->type() != DataType::kFloat || w->rank() != 4) return false;
    if (!Rank4(n.inputs[0], DataType::kFloat) || !IsRank4Float(graph_, n.inputs[0])) return false;
    if (!Rank4(n.outputs[0], DataType::kFloat)) return false;
    const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
    if (has_bias && ConstantValue(graph_, n.inputs[2]) == nullptr) return false;
    const bool has_residual = n.inputs.size() > 3 && !n.inputs[3].empty();
    if (has_residual && !Rank4(n.inputs[3], DataType::kFloat)) return false;
    // An image entering the layout: read it channels first, no Transpose.
    const bool stem = !Mapped(n.inputs[0]) && !has_residual && IsStemConv(n, *w);
    auto out = OnyxNode(n, stem ? "NchwToNhwcConv" : "NhwcConv");
    out->attributes = n.attributes;
    out->inputs = {stem ? n.inputs[0] : Nhwc(n.inputs[0]), n.inputs[1], has_bias ? n.inputs[2] : ""};
    if (has_residual) out->inputs.push_back(Nhwc(n.inputs[3]));
    Node& added = Replace(n, std::move(out));
    ProduceNhwc(added, 0);
    convs_.insert(added.outputs[0]);
    return true;
  }

  // 2-D ConvTranspose with constant float weights, explicit pads, no
  // output_padding and no output_shape (what exporters write for learned
  // upsampling).
  bool ConvertConvTranspose(Node& n) {
    if (!IsOp(&n, "ConvTranspose") || n.inputs.size() < 2) return false;
    const Tensor* w = ConstantValue(graph_, n.inputs[1]);
    if (w == nullptr || w->type() != DataType::kFloat || w->rank() != 4) return false;
    const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
    if (has_bias && ConstantValue(graph_, n.inputs[2]) == nullptr) return false;
    const onnx::AttributeProto* auto_pad = n.FindAttribute("auto_pad");
    if (auto_pad != nullptr && auto_pad->s() != "NOTSET" && auto_pad->s() != "VALID") return false;
    if (n.FindAttribute("output_shape") != nullptr) return false;
    if (const onnx::AttributeProto* p = n.FindAttribute("output_padding")) {
      for (int64_t v : p->ints()) {
        if (v != 0) return false;
      }
    }
    if (!Rank4(n.inputs[0], DataType::kFloat) || !IsRank4Float(graph_, n.inputs[0])) return false;
    if (!Rank4(n.outputs[0], DataType::kFloat)) return false;
    auto out = OnyxNode(n, "NhwcConvTranspose");
    out->attributes = n.attributes;
    out->inputs = {Nhwc(n.inputs[0]), n.inputs[1], has_bias ? n.inputs[2] : ""};
    Node& added = Replace(n, std::move(out));
    ProduceNhwc(added, 0);
    return true;
  }

  // y = scale (x - mean) / sqrt(var + eps) + bias per channel: a depthwise
  // 1x1 convolution, whose post-op can take the activation that follows.
  bool ConvertBatchNorm(Node& n) {
    if (!IsOp(&n, "BatchNormalization") || !Mapped(n.inputs[0]) || n.inputs.size() != 5) return false;
    if (n.outputs.size() > 1 &&
        std::any_of(n.outputs.begin() + 1, n.outputs.end(), [](const std::string& o) { return !o.empty(); })) {
      return false;
    }
    if (IntAttr(n, "training_mode", 0) != 0 || !IsRank4Float(graph_, n.inputs[0])) return false;
    const Tensor* p[4];
    for (int i = 0; i < 4; ++i) {
      p[i] = ConstantValue(graph_, n.inputs[i + 1]);
      if (p[i] == nullptr || p[i]->type() != DataType::kFloat || p[i]->num_elements() != p[0]->num_elements()) {
        return false;
      }
    }
    const int64_t channels = p[0]->num_elements();
    const int64_t declared = Rank4Info(graph_, n.inputs[0])->dims[1];
    if ((declared >= 0 && declared != channels) || !Rank4(n.outputs[0], DataType::kFloat)) return false;
    const onnx::AttributeProto* eps_attr = n.FindAttribute("epsilon");
    const double eps = eps_attr != nullptr ? eps_attr->f() : 1e-5;
    Tensor weights = Tensor::Allocate(DataType::kFloat, {channels, 1, 1, 1});
    Tensor bias = Tensor::Allocate(DataType::kFloat, {channels});
    for (int64_t c = 0; c < channels; ++c) {
      const double scale = p[0]->data<float>()[c] / std::sqrt(static_cast<double>(p[3]->data<float>()[c]) + eps);
      weights.mutable_data<float>()[c] = static_cast<float>(scale);
      bias.mutable_data<float>()[c] =
          static_cast<float>(p[1]->data<float>()[c] - scale * static_cast<double>(p[2]->data<float>()[c]));
    }
    const std::string w_name = AddInitializer(n.outputs[0] + "_scale", std::move(weights));
    const std::string b_name = AddInitializer(n.outputs[0] + "_shift", std::move(bias));
    auto out = OnyxNode(n, "NhwcConv");
    out->inputs = {nhwc_[n.inputs[0]], w_name, b_name};
    out->attributes["group"] = IntAttribute("group", channels);
    out->attributes["kernel_shape"] = IntsAttribute("kernel_shape", {1, 1});
    Node& added = Replace(n, std::move(out));
    ProduceNhwc(added, 0);
    convs_.insert(added.outputs[0]);
    return true;
  }

  // A MaxPool that alone reads a stem convolution (ResNet's, DenseNet's,
  // ShuffleNet's) becomes the stem's pool_* attributes: the kernel pools its
  // rows while they are in cache, and the stem's full-resolution output is
  // never stored.
  bool FoldStemPool(Node& n) {
    if (!IsOp(&n, "MaxPool") || !Mapped(n.inputs[0]) || !IsRank4Float(graph_, n.inputs[0])) return false;
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) return false;  // Indices
    const std::string& nhwc_in = nhwc_[n.inputs[0]];
    Node* conv = graph_.Producer(nhwc_in);
    if (conv == nullptr || conv->domain != kOnyxDomain || conv->op_type != "NchwToNhwcConv" ||
        conv->FindAttribute("pool_kernel_shape") != nullptr) {
      return false;
    }
    if (SoleConsumer(graph_, n.inputs[0]) != &n || !graph_.Consumers(nhwc_in).empty() || graph_.IsOutput(n.inputs[0]) ||
        implicit_uses_.count(n.inputs[0]) > 0) {
      return false;
    }
    const onnx::AttributeProto* kernel = n.FindAttribute("kernel_shape");
    if (kernel == nullptr || kernel->ints_size() != 2) return false;
    if (!Undilated(n)) return false;
    if (!Rank4(n.outputs[0], DataType::kFloat)) return false;
    for (const char* name : {"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode"}) {
      if (const onnx::AttributeProto* a = n.FindAttribute(name)) {
        onnx::AttributeProto renamed = *a;
        renamed.set_name(std::string("pool_") + name);
        conv->attributes[renamed.name()] = renamed;
      }
    }
    nhwc_.erase(n.inputs[0]);
    recorded_.erase(std::find(recorded_.begin(), recorded_.end(), n.inputs[0]));
    conv->outputs[0] = n.outputs[0];
    graph_.RemoveNode(n.index);
    ProduceNhwc(*conv, 0);
    return true;
  }

  bool ConvertPool(Node& n) {
    const bool max = IsOp(&n, "MaxPool"), avg = IsOp(&n, "AveragePool");
    const bool gmax = IsOp(&n, "GlobalMaxPool"), gavg = IsOp(&n, "GlobalAveragePool");
    if (!(max || avg || gmax || gavg) || !Mapped(n.inputs[0]) || !IsRank4Float(graph_, n.inputs[0])) return false;
    if (!Rank4(n.outputs[0], DataType::kFloat)) return false;
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) return false;  // MaxPool's Indices
    if (max || avg) {
      const onnx::AttributeProto* kernel = n.FindAttribute("kernel_shape");
      if (kernel == nullptr || kernel->ints_size() != 2) return false;
      if (!Undilated(n)) return false;
      if (avg && IntAttr(n, "ceil_mode", 0) != 0 && IntAttr(n, "count_include_pad", 0) != 0) return false;
    }
    auto out = OnyxNode(n, max    ? "NhwcMaxPool"
                           : avg  ? "NhwcAveragePool"
                           : gmax ? "NhwcGlobalMaxPool"
                                  : "NhwcGlobalAveragePool");
    out->attributes = n.attributes;
    out->attributes.erase("storage_order");
    out->inputs = {nhwc_[n.inputs[0]]};
    Node& added = Replace(n, std::move(out));
    ProduceNhwc(added, 0);
    return true;
  }

  // An activation after a converted convolution that has none becomes its
  // post-op, when nothing else reads the convolution's result: neither in
  // NCHW nor channels-last (a node converted before this one reads that).
  bool ConvertActivation(Node& n) {
    if (!Mapped(n.inputs.empty() ? "" : n.inputs[0])) return false;
    const std::string& nhwc_in = nhwc_[n.inputs[0]];
    if (convs_.count(nhwc_in) == 0 || SoleConsumer(graph_, n.inputs[0]) != &n || !graph_.Consumers(nhwc_in).empty() ||
        implicit_uses_.count(n.inputs[0]) > 0) {
      return false;
    }
    Node* conv = graph_.Producer(nhwc_in);
    if (conv == nullptr || conv->FindAttribute("activation") != nullptr) return false;
    std::optional<MatchedActivation> act = MatchSingleNodeActivation(graph_, &n);
    if (!act || !Rank4(n.outputs[0], DataType::kFloat)) return false;
    SetActivation(*conv, act->name, act->params);
    nhwc_.erase(n.inputs[0]);
    recorded_.erase(std::find(recorded_.begin(), recorded_.end(), n.inputs[0]));
    conv->outputs[0] = n.outputs[0];
    graph_.RemoveNode(n.index);
    ProduceNhwc(*conv, 0);
    convs_.insert(conv->outputs[0]);
    return true;
  }

  bool ConvertUnary(Node& n) {
    if (!IsUnaryElementwise(n) || n.outputs.size() != 1 || !Mapped(n.inputs[0])) return false;
    if (!Rank4(n.outputs[0], TypeOf(n.inputs[0]))) return false;
    n.inputs[0] = nhwc_[n.inputs[0]];
    ProduceNhwc(n, 0);
    return true;
  }

  bool ConvertBroadcast(Node& n) {
    if (!IsBroadcastElementwise(n) || n.outputs.size() != 1) return false;
    if (std::none_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& v) { return Mapped(v); })) return false;
    for (const std::string& v : n.inputs) {
      if (v.empty() || Mapped(v) || Rank4Info(graph_, v) != nullptr) continue;
      const Tensor* t = ConstantValue(graph_, v);
      if (t == nullptr || t->rank() > 4 || t->type() == DataType::kString) return false;
    }
    const std::string& first_mapped =
        *std::find_if(n.inputs.begin(), n.inputs.end(), [&](const std::string& v) { return Mapped(v); });
    if (!Rank4(n.outputs[0], TypeOf(first_mapped))) return false;
    for (std::string& v : n.inputs) {
      if (v.empty()) continue;
      if (Mapped(v) || ConstantValue(graph_, v) == nullptr) {
        v = Nhwc(v);
      } else {
        v = *PermutedConstant(v);
      }
    }
    ProduceNhwc(n, 0);
    return true;
  }

  bool ConvertConcat(Node& n) {
    if (!IsOp(&n, "Concat") || n.outputs.size() != 1) return false;
    int64_t axis = IntAttr(n, "axis", 0);
    if (axis < 0) axis += 4;
    if (axis != 1) return false;
    bool any = false;
    for (const std::string& v : n.inputs) {
      if (Rank4Info(graph_, v) == nullptr) return false;
      any |= Mapped(v);
    }
    if (!any || !Rank4(n.outputs[0], TypeOf(n.inputs[0]))) return false;
    for (std::string& v : n.inputs) v = Nhwc(v);
    n.attributes["axis"] = IntAttribute("axis", 3);
    ProduceNhwc(n, 0);
    return true;
  }

  // Resize with constant scales or sizes and no region of interest: the
  // per-axis factors are permuted like the data. Resize-18's antialias and
  // keep_aspect_ratio_policy treat every axis alike (one filter per axis; one
  // factor over all axes), so they permute too; its `axes` names NCHW axes,
  // and such a node stays.
  bool ConvertResize(Node& n) {
    if (!IsOp(&n, "Resize") || n.since_version < 11 || !Mapped(n.inputs[0]) || n.inputs.size() < 3) return false;
    if (n.FindAttribute("axes") != nullptr) return false;
    const onnx::AttributeProto* mode = n.FindAttribute("coordinate_transformation_mode");
    if (mode != nullptr && mode->s() == "tf_crop_and_resize") return false;
    const bool has_scales = n.inputs.size() > 2 && !n.inputs[2].empty();
    const bool has_sizes = n.inputs.size() > 3 && !n.inputs[3].empty();
    if (has_scales == has_sizes) return false;
    const std::string& factors = n.inputs[has_scales ? 2 : 3];
    const Tensor* t = ConstantValue(graph_, factors);
    if (t == nullptr || t->rank() != 1 || t->num_elements() != 4) return false;
    if (!Rank4(n.outputs[0], TypeOf(n.inputs[0]))) return false;
    Tensor permuted = Tensor::Allocate(t->type(), {4});
    const size_t size = ElementSize(t->type());
    for (int i = 0; i < 4; ++i) {
      std::memcpy(static_cast<char*>(permuted.mutable_raw()) + i * size,
                  static_cast<const char*>(t->raw()) + kToNhwc[i] * size, size);
    }
    const std::string name = AddInitializer(factors + "_nhwc", std::move(permuted));
    n.inputs[0] = nhwc_[n.inputs[0]];
    n.inputs[has_scales ? 2 : 3] = name;
    ProduceNhwc(n, 0);
    return true;
  }

  // Split along channels (ShuffleNet's branches): axis 1 becomes 3.
  bool ConvertSplit(Node& n) {
    if (!IsOp(&n, "Split") || !Mapped(n.inputs[0])) return false;
    int64_t axis = IntAttr(n, "axis", 0);
    if (axis < 0) axis += 4;
    if (axis != 1) return false;
    for (const std::string& out : n.outputs) {
      if (!out.empty() && !Rank4(out, TypeOf(n.inputs[0]))) return false;
    }
    n.inputs[0] = nhwc_[n.inputs[0]];
    n.attributes["axis"] = IntAttribute("axis", 3);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (!n.outputs[i].empty()) ProduceNhwc(n, i);
    }
    return true;
  }

  // Slice with constant axes (or none: the leading ones): each NCHW axis
  // becomes its NHWC position; starts, ends and steps are unchanged.
  bool ConvertSlice(Node& n) {
    if (!IsOp(&n, "Slice") || !Mapped(n.inputs[0]) || n.outputs.size() != 1) return false;
    static constexpr int64_t kPosition[4] = {0, 3, 1, 2};  // NCHW axis -> NHWC axis
    auto remap = [](int64_t axis) -> int64_t {
      if (axis < 0) axis += 4;
      return axis >= 0 && axis < 4 ? kPosition[axis] : -1;
    };
    std::vector<int64_t> axes;
    if (n.since_version < 10) {
      const onnx::AttributeProto* a = n.FindAttribute("axes");
      const onnx::AttributeProto* starts = n.FindAttribute("starts");
      if (a != nullptr) {
        axes.assign(a->ints().begin(), a->ints().end());
      } else if (starts != nullptr) {
        for (int i = 0; i < starts->ints_size(); ++i) axes.push_back(i);
      }
    } else if (n.inputs.size() > 3 && !n.inputs[3].empty()) {
      const Tensor* t = ConstantValue(graph_, n.inputs[3]);
      if (t == nullptr || (t->type() != DataType::kInt64 && t->type() != DataType::kInt32)) return false;
      for (int64_t i = 0; i < t->num_elements(); ++i) {
        axes.push_back(t->type() == DataType::kInt64 ? t->data<int64_t>()[i] : t->data<int32_t>()[i]);
      }
    } else {
      const Tensor* starts = ConstantValue(graph_, n.inputs[1]);
      if (starts == nullptr) return false;
      for (int64_t i = 0; i < starts->num_elements(); ++i) axes.push_back(i);
    }
    if (axes.empty()) return false;
    for (int64_t& a : axes) {
      a = remap(a);
      if (a < 0) return false;
    }
    if (!Rank4(n.outputs[0], TypeOf(n.inputs[0]))) return false;
    if (n.since_version < 10) {
      n.attributes["axes"] = IntsAttribute("axes", axes);
    } else {
      Tensor t = Tensor::Allocate(DataType::kInt64, {static_cast<int64_t>(axes.size())});
      std::copy(axes.begin(), axes.end(), t.mutable_data<int64_t>());
      n.inputs.resize(std::max<size_t>(n.inputs.size(), 4));
      n.inputs[3] = AddInitializer(n.outputs[0] + "_axes", std::move(t));
    }
    n.inputs[0] = nhwc_[n.inputs[0]];
    ProduceNhwc(n, 0);
    return true;
  }

  // ShuffleNet's channel shuffle, Reshape [N, C, H, W] -> [N, g, C/g, H, W],
  // Transpose (0, 2, 1, 3, 4), Reshape back to [N, C, H, W], becomes one
  // NhwcChannelShuffle (group g) on the channels-last form: a permutation of
  // each pixel's channels instead of a trip out of the layout and back.
  // Matched at the last Reshape, so the two nodes removed were visited before.
  bool ConvertChannelShuffle(Node& n) {
    if (!IsOp(&n, "Reshape") || n.outputs.size() != 1 || n.inputs.empty()) return false;
    Node* transpose = graph_.Producer(n.inputs[0]);
    if (transpose == nullptr || !IsOp(transpose, "Transpose") || !SoleUse(transpose->outputs[0], n)) return false;
    const onnx::AttributeProto* perm = transpose->FindAttribute("perm");
    static constexpr int64_t kSwap12[5] = {0, 2, 1, 3, 4};
    if (perm == nullptr || perm->ints_size() != 5 || !std::equal(perm->ints().begin(), perm->ints().end(), kSwap12)) {
      return false;
    }
    Node* split = graph_.Producer(transpose->inputs[0]);
    if (split == nullptr || !IsOp(split, "Reshape") || split->inputs.empty() || !Mapped(split->inputs[0]) ||
        !SoleUse(split->outputs[0], *transpose)) {
      return false;
    }
    const ValueInfo* x = Rank4Info(graph_, split->inputs[0]);
    const ValueInfo* grouped = graph_.FindValueInfo(split->outputs[0]);
    const ValueInfo* y = Rank4Info(graph_, n.outputs[0]);
    if (x == nullptr || y == nullptr || grouped == nullptr || !grouped->has_shape || grouped->dims.size() != 5) {
      return false;
    }
    const int64_t c = x->dims[1], groups = grouped->dims[1], per_group = grouped->dims[2];
    if (c <= 0 || groups <= 0 || per_group <= 0 || groups * per_group != c) return false;
    for (int i : {1, 2, 3}) {
      if (x->dims[i] <= 0 || y->dims[i] != x->dims[i]) return false;
    }
    if (grouped->dims[3] != x->dims[2] || grouped->dims[4] != x->dims[3]) return false;
    const std::string input = nhwc_[split->inputs[0]];
    auto shuffle = OnyxNode(n, "NhwcChannelShuffle");
    shuffle->inputs = {input};
    shuffle->attributes["group"] = IntAttribute("group", groups);
    graph_.RemoveNode(transpose->index);
    graph_.RemoveNode(split->index);
    Node& added = Replace(n, std::move(shuffle));
    ProduceNhwc(added, 0);
    return true;
  }

  // `value` is read by `reader` alone, and by no graph output or subgraph.
  bool SoleUse(const std::string& value, const Node& reader) const {
    std::vector<Node*> consumers = graph_.Consumers(value);
    return consumers.size() == 1 && consumers[0] == &reader && !graph_.IsOutput(value) &&
           implicit_uses_.count(value) == 0;
  }

  // Values renamed to their NHWC form that something still reads in NCHW
  // get a Transpose back under their old name.
  void LeaveLayout() {
    for (const std::string& nchw : recorded_) {
      if (renamed_.count(nchw) == 0 || nhwc_.count(nchw) == 0) continue;
      if (graph_.Consumers(nchw).empty() && !graph_.IsOutput(nchw) && implicit_uses_.count(nchw) == 0) continue;
      AddTranspose(nhwc_[nchw], nchw, kToNchw);
    }
  }

  void RemoveDeadTransposes() {
    for (bool removed = true; removed;) {
      removed = false;
      for (Node* n : graph_.Nodes()) {
        if (!IsOp(n, "Transpose") || graph_.IsOutput(n->outputs[0]) || !graph_.Consumers(n->outputs[0]).empty() ||
            implicit_uses_.count(n->outputs[0]) > 0) {
          continue;
        }
        graph_.RemoveNode(n->index);
        removed = true;
      }
    }
  }

  Graph& graph_;
  int transpose_version_ = 1;
  bool changed_ = false;
  std::map<std::string, std::string> nhwc_;  // NCHW value -> its NHWC form
  std::vector<std::string> recorded_;        // nhwc_'s keys in the order found
  std::set<std::string> renamed_;            // NCHW names no node produces any more
  std::set<std::string> convs_;              // NHWC values NhwcConv nodes produce
  std::set<std::string> implicit_uses_;      // values subgraphs read from this graph
};

}  // namespace

absl::StatusOr<bool> NhwcLayout::ApplyImpl(Graph& graph) const {
  if (graph.parent() != nullptr) return false;
  return Rewriter(graph).Run();
}

}  // namespace onyx
