// LabelEncoder-1/2/4: maps each element through a key -> value table.
//   v1: classes_strings; strings become their index, indices their string.
//   v2: keys_* / values_* lists of strings, int64s or floats.
//   v4: also keys_tensor / values_tensor / default_tensor of any listed type,
//       and a NaN key matches NaN inputs.
// A key listed twice maps to its first value (v1: a string's last index), as
// in ONNX Runtime.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cpu/ml/ml_kernels.h"

namespace onyx {
namespace {

bool IsIntegral(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kInt16; }
bool IsFloating(DataType t) { return t == DataType::kFloat || t == DataType::kDouble; }

// Element i of a string, integer or floating tensor as the key maps hold it.
int64_t IntAt(const Tensor& t, int64_t i) {
  switch (t.type()) {
    case DataType::kInt64: return t.data<int64_t>()[i];
    case DataType::kInt32: return t.data<int32_t>()[i];
    case DataType::kInt16: return t.data<int16_t>()[i];
    default: return 0;
  }
}
double FloatAt(const Tensor& t, int64_t i) {
  return t.type() == DataType::kFloat ? t.data<float>()[i] : t.data<double>()[i];
}

Tensor StringList(const std::vector<std::string>& v) {
  Tensor t = Tensor::Allocate(DataType::kString, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<std::string>()[i] = v[i];
  return t;
}
template <typename T>
Tensor List(DataType type, const std::vector<T>& v) {
  Tensor t = Tensor::Allocate(type, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<T>()[i] = v[i];
  return t;
}

class LabelEncoder final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<LabelEncoder>(new LabelEncoder());
    const int version = info.node().since_version;
    Tensor keys;
    if (version < 2) {
      const auto classes = info.AttrOr<std::vector<std::string>>("classes_strings", {});
      std::vector<int64_t> indices(classes.size());
      for (size_t i = 0; i < classes.size(); ++i) indices[i] = static_cast<int64_t>(i);
      const DataType in = info.InputType(0);
      if (in == DataType::kString || (in == DataType::kUndefined && info.HasAttr("default_int64"))) {
        keys = StringList(classes);
        k->values_ = List(DataType::kInt64, indices);
        k->default_ = List<int64_t>(DataType::kInt64, {info.AttrOr<int64_t>("default_int64", -1)});
        k->last_wins_ = true;
      } else {
        keys = List(DataType::kInt64, indices);
        k->values_ = StringList(classes);
        k->default_ = StringList({info.AttrOr<std::string>("default_string", "_Unused")});
      }
    } else {
      ASSIGN_OR_RETURN(keys, ListAttr(info, "keys"));
      ASSIGN_OR_RETURN(k->values_, ListAttr(info, "values"));
      k->nan_matches_ = version >= 4;
      ASSIGN_OR_RETURN(k->default_, Default(info, k->values_.type()));
    }
    if (keys.num_elements() != k->values_.num_elements()) {
      return info.Error(absl::StrCat(keys.num_elements(), " keys but ", k->values_.num_elements(), " values"));
    }
    k->key_type_ = keys.type();
    for (int64_t i = 0; i < keys.num_elements(); ++i) k->AddKey(keys, i);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* x = ctx.Input(0);
    if (x == nullptr) return ctx.Error("input X is missing");
    if (x->type() != key_type_) {
      return ctx.Error(
          absl::StrCat("input type ", DataTypeName(x->type()), " differs from the key type ", DataTypeName(key_type_)));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.Output(0, x->dims(), values_.type()));
    const size_t width = ElementSize(values_.type());
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      const int64_t k = Find(*x, i);
      const Tensor& src = k < 0 ? default_ : values_;
      const int64_t j = k < 0 ? 0 : k;
      if (values_.type() == DataType::kString) {
        y->mutable_data<std::string>()[i] = src.data<std::string>()[j];
      } else {
        std::memcpy(static_cast<char*>(y->mutable_raw()) + i * width, static_cast<const char*>(src.raw()) + j * width,
                    width);
      }
    }
    return absl::OkStatus();
  }

 private:
  // keys_* / values_*: the one list attribute set, or the tensor variant.
  static absl::StatusOr<Tensor> ListAttr(const OpKernelInfo& info, const std::string& prefix) {
    int set = 0;
    Tensor out;
    if (info.HasAttr(prefix + "_strings")) {
      out = StringList(info.AttrOr<std::vector<std::string>>(prefix + "_strings", {}));
      ++set;
    }
    if (info.HasAttr(prefix + "_int64s")) {
      out = List(DataType::kInt64, info.AttrOr<std::vector<int64_t>>(prefix + "_int64s", {}));
      ++set;
    }
    if (info.HasAttr(prefix + "_floats")) {
      out = List(DataType::kFloat, info.AttrOr<std::vector<float>>(prefix + "_floats", {}));
      ++set;
    }
    if (info.HasAttr(prefix + "_tensor")) {
      auto t = info.Attr<Tensor>(prefix + "_tensor");
      if (!t.ok()) return t.status();
      const DataType type = t->type();
      if (type != DataType::kString && !IsIntegral(type) && !IsFloating(type)) {
        return info.Error(absl::StrCat(prefix, "_tensor has unsupported type ", DataTypeName(type)));
      }
      out = *t;
      ++set;
    }
    if (set != 1) return info.Error(absl::StrCat("exactly one of the ", prefix, "_* attributes must be set"));
    return out;
  }

  // default_tensor, else the legacy default_* of the value type.
  static absl::StatusOr<Tensor> Default(const OpKernelInfo& info, DataType type) {
    if (info.HasAttr("default_tensor")) {
      auto t = info.Attr<Tensor>("default_tensor");
      if (!t.ok()) return t.status();
      if (t->type() != type || t->num_elements() != 1) {
        return info.Error(absl::StrCat("default_tensor must hold one ", DataTypeName(type), " value"));
      }
      return *t;
    }
    Tensor d = Tensor::Allocate(type, {1});
    switch (type) {
      case DataType::kString:
        d.mutable_data<std::string>()[0] = info.AttrOr<std::string>("default_string", "_Unused");
        break;
      case DataType::kInt64: d.mutable_data<int64_t>()[0] = info.AttrOr<int64_t>("default_int64", -1); break;
      case DataType::kInt32: d.mutable_data<int32_t>()[0] = -1; break;
      case DataType::kInt16: d.mutable_data<int16_t>()[0] = -1; break;
      case DataType::kFloat: d.mutable_data<float>()[0] = info.AttrOr<float>("default_float", -0.0f); break;
      case DataType::kDouble: d.mutable_data<double>()[0] = -0.0; break;
      default: break;
    }
    return d;
  }

  void AddKey(const Tensor& keys, int64_t i) {
    auto add = [this, i](auto& map, auto key) {
      if (last_wins_) map[key] = i;
      else map.emplace(key, i);
    };
    if (keys.type() == DataType::kString) {
      add(strings_, keys.data<std::string>()[i]);
    } else if (IsIntegral(keys.type())) {
      add(ints_, IntAt(keys, i));
    } else {
      const double v = FloatAt(keys, i);
      if (!std::isnan(v)) add(floats_, v);
      else if (nan_index_ < 0) nan_index_ = i;
    }
  }

  // Index of element i's key in the table, or -1.
  int64_t Find(const Tensor& x, int64_t i) const {
    if (x.type() == DataType::kString) {
      auto it = strings_.find(x.data<std::string>()[i]);
      return it == strings_.end() ? -1 : it->second;
    }
    if (IsIntegral(x.type())) {
      auto it = ints_.find(IntAt(x, i));
      return it == ints_.end() ? -1 : it->second;
    }
    const double v = FloatAt(x, i);
    if (std::isnan(v)) return nan_matches_ ? nan_index_ : -1;
    auto it = floats_.find(v);
    return it == floats_.end() ? -1 : it->second;
  }

  DataType key_type_ = DataType::kUndefined;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<int64_t, int64_t> ints_;
  std::unordered_map<double, int64_t> floats_;
  int64_t nan_index_ = -1;
  bool nan_matches_ = false;
  bool last_wins_ = false;
  Tensor values_, default_;
};

}  // namespace

void RegisterLabelEncoderKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("LabelEncoder").Domain(kMlDomain).Since(1).Build(), MakeFactory<LabelEncoder>());
}

}  // namespace onyx
