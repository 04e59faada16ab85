// Cast and CastLike. Numeric pairs are plain loops over typed pointers; float16
// and bfloat16 go through float; strings are parsed and formatted like numpy.
#include "providers/cpu/tensor/cast.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

// --- string formatting (numpy str() of a scalar) ---------------------------

// Lays out a shortest-round-trip scientific string ("4.7892547e-01") of `value`
// the way numpy prints scalars: positional for 1e-4 <= |value| < 1e16 (the
// value itself, so float32 0.0001 prints "1e-04"), otherwise scientific with
// at least two exponent digits.
std::string NumpyStyle(const std::string& sci, double value) {
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  // The exponent to_chars/printf wrote: "e+05" or "e-05" (from_chars takes no '+').
  size_t digits_at = e + 1 + (e + 1 < sci.size() && sci[e + 1] == '+');
  int exp = 0;
  std::from_chars(sci.data() + std::min(digits_at, sci.size()), sci.data() + sci.size(), exp);
  bool neg = !mant.empty() && mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const bool zero = digits == "0";
  std::string out = neg ? "-" : "";
  const double mag = std::fabs(value);
  if (zero || (mag >= 1e-4 && mag < 1e16)) {
    if (zero) return out + "0.0";
    if (exp >= 0) {
      std::string int_part = digits.substr(0, std::min<size_t>(digits.size(), exp + 1));
      while (static_cast<int>(int_part.size()) < exp + 1) int_part += '0';
      std::string frac = digits.size() > static_cast<size_t>(exp + 1) ? digits.substr(exp + 1) : "0";
      return out + int_part + "." + frac;
    }
    return out + "0." + std::string(-exp - 1, '0') + digits;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return out + buf;
}

template <typename F>
std::string FormatFloat(F v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  return NumpyStyle(std::string(buf, r.ptr), static_cast<double>(v));
}

// Shortest digits that round-trip through a 16-bit float format.
std::string FormatHalfLike(float v, uint16_t bits, uint16_t (*to_bits)(float)) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  for (int precision = 0; precision < 9; ++precision) {
    const int n = std::snprintf(buf, sizeof(buf), "%.*e", precision, static_cast<double>(v));
    float parsed = 0;
    std::from_chars(buf, buf + n, parsed);
    if (to_bits(parsed) == bits) break;
  }
  return NumpyStyle(buf, static_cast<double>(v));
}

template <typename S>
std::string ToString(const S& v) {
  if constexpr (std::is_same_v<S, std::string>) return v;
  else if constexpr (std::is_same_v<S, bool>) return v ? "True" : "False";
  else if constexpr (std::is_same_v<S, Half>) return FormatHalfLike(ToFloat(v), v.bits, FloatToHalf);
  else if constexpr (std::is_same_v<S, BFloat16>) return FormatHalfLike(ToFloat(v), v.bits, FloatToBFloat16);
  else if constexpr (std::is_floating_point_v<S>) return FormatFloat(v);
  else return std::to_string(v);
}

// --- string parsing ---------------------------------------------------------

bool ParseDouble(std::string_view s, double* out) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (r.ec == std::errc::result_out_of_range) {
    *out = (s.front() == '-' ? -1 : 1) * std::numeric_limits<double>::infinity();
    return true;
  }
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

template <typename D>
bool FromString(const std::string& s, D* out) {
  if constexpr (std::is_same_v<D, bool>) {
    if (s == "True" || s == "true") return *out = true, true;
    if (s == "False" || s == "false") return *out = false, true;
  } else if constexpr (std::is_integral_v<D>) {
    std::string_view v = s;
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
    if (!v.empty() && v.front() == '+') v.remove_prefix(1);
    auto r = std::from_chars(v.data(), v.data() + v.size(), *out);
    if (r.ec == std::errc() && r.ptr == v.data() + v.size()) return true;
  }
  double d;
  if (!ParseDouble(s, &d)) return false;
  if constexpr (std::is_same_v<D, Half>) out->bits = FloatToHalf(static_cast<float>(d));
  else if constexpr (std::is_same_v<D, BFloat16>) out->bits = FloatToBFloat16(static_cast<float>(d));
  else if constexpr (std::is_same_v<D, bool>) *out = d != 0;
  else *out = static_cast<D>(d);
  return true;
}

// --- numeric conversion -----------------------------------------------------

template <typename S>
inline auto Load(const S& v) {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) return ToFloat(v);
  else return v;
}

template <typename D, typename V>
inline D Store(V v) {
  if constexpr (std::is_same_v<D, Half>) return Half{FloatToHalf(static_cast<float>(v))};
  else if constexpr (std::is_same_v<D, BFloat16>) return BFloat16{FloatToBFloat16(static_cast<float>(v))};
  else if constexpr (std::is_same_v<D, bool>) return v != V(0);
  else return static_cast<D>(v);
}

template <typename S, typename D>
absl::Status CastLoop(const S* s, D* d, int64_t n) {
  if constexpr (std::is_same_v<D, std::string>) {
    ParallelFor(n, 1024, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = ToString(s[i]);
    });
  } else if constexpr (std::is_same_v<S, std::string>) {
    for (int64_t i = 0; i < n; ++i) {
      if (!FromString(s[i], &d[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot convert string '", s[i], "' to ", DataTypeName(DataTypeOf<D>())));
      }
    }
  } else if constexpr (std::is_same_v<S, D>) {
    std::memcpy(d, s, n * sizeof(S));
  } else {
    ParallelFor(n, 16384, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = Store<D>(Load(s[i]));
    });
  }
  return absl::OkStatus();
}

template <typename Fn>
absl::Status DispatchCastable(DataType type, Fn&& fn) {
  return DispatchTypes<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                       uint64_t, bool, std::string>(type, std::forward<Fn>(fn));
}

// The element types of opsets 19-24 that neither onyx nor the onnx library
// it links knows: their family ("float8", ...) and name; false for others.
bool UnsupportedType(int64_t elem_type, const char** family, const char** name) {
  static constexpr struct {
    int64_t type;
    const char* family;
    const char* name;
  } kTypes[] = {{17, "float8", "float8e4m3fn"},   {18, "float8", "float8e4m3fnuz"}, {19, "float8", "float8e5m2"},
                {20, "float8", "float8e5m2fnuz"}, {21, "int4/uint4", "uint4"},      {22, "int4/uint4", "int4"},
                {23, "float4", "float4e2m1"},     {24, "float8", "float8e8m0"}};
  for (const auto& t : kTypes) {
    if (t.type == elem_type) {
      *family = t.family;
      *name = t.name;
      return true;
    }
  }
  return false;
}

// Cast-19 and CastLike-19 add the float8 types (and `saturate`, which only
// they use), 21 the 4-bit integers, 23 float4. Casts to or from those are
// refused when the session is built, naming the node, the op at the
// model's opset and the type, rather than failing at run time.
absl::Status CheckCastTypes(const OpKernelInfo& info, int64_t to) {
  const Node& node = info.node();
  const char *family, *name;
  auto refuse = [&](absl::string_view what) {
    return info.Error(absl::StrCat(node.op_type, " at opset ", info.graph().OpsetFor(node.domain), ": ", family,
                                   " types are not supported (", what, " is ", name, ")"));
  };
  if (UnsupportedType(to, &family, &name)) return refuse("attribute 'to'");
  for (int i = 0; i < std::min(info.InputCount(), 2); ++i) {
    if (UnsupportedType(static_cast<int64_t>(info.InputType(i)), &family, &name)) {
      return refuse(absl::StrCat("input ", i, " '", node.inputs[i], "'"));
    }
  }
  return absl::OkStatus();
}

class Cast final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    if (info.node().op_type == "CastLike") {
      RETURN_IF_ERROR(CheckCastTypes(info, 0));
      return std::unique_ptr<OpKernel>(new Cast(DataType::kUndefined));
    }
    ASSIGN_OR_RETURN(int64_t to, info.Attr<int64_t>("to"));
    RETURN_IF_ERROR(CheckCastTypes(info, to));
    if (!IsValidDataType(static_cast<int32_t>(to))) {
      return info.Error(absl::StrCat("attribute 'to' = ", to, " is not a valid element type"));
    }
    return std::unique_ptr<OpKernel>(new Cast(static_cast<DataType>(to)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    DataType to = to_;
    if (to == DataType::kUndefined) {
      const Tensor* like = ctx.Input(1);
      if (like == nullptr) return ctx.Error("input 'target_type' is missing");
      to = like->type();
    }
    if (to == x.type() && to != DataType::kString) {
      ctx.SetOutput(0, Value(x));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), to));
    absl::Status s = CastElements(x, *y);
    return s.ok() ? s : ctx.Error(s.message());
  }

 private:
  explicit Cast(DataType to) : to_(to) {}
  DataType to_;  // kUndefined: CastLike, take the type of input 1
};

}  // namespace

absl::Status CastElements(const Tensor& src, Tensor& dst) {
  if (src.num_elements() != dst.num_elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cast of ", src.num_elements(), " elements into ", dst.num_elements()));
  }
  return DispatchCastable(src.type(), [&](auto stag) {
    using S = decltype(stag);
    return DispatchCastable(dst.type(), [&](auto dtag) {
      using D = decltype(dtag);
      return CastLoop<S, D>(src.data<S>(), dst.mutable_data<D>(), src.num_elements());
    });
  });
}

absl::StatusOr<Tensor> ScalarOf(DataType type, double value) {
  Tensor src = Tensor::Allocate(DataType::kDouble, {});
  *src.mutable_data<double>() = value;
  Tensor dst = Tensor::Allocate(type, {});
  RETURN_IF_ERROR(CastElements(src, dst));
  return dst;
}

// In place when the input dies here and both types have one size (int32 <->
// float, float16 <-> bfloat16): each value is read before its own slot is
// written, and no other.
void RegisterCastKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Cast").Since(6, 19).MayInplace(0, 0).Build(), MakeFactory<Cast>());
  r.Register(KernelDefBuilder("CastLike").Since(15, 19).MayInplace(0, 0).Build(), MakeFactory<Cast>());
}

}  // namespace onyx
