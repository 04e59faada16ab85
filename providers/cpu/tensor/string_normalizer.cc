// StringNormalizer: drops stopwords (optionally case-insensitively) and changes
// case. Case mapping decodes UTF-8 and uses the wide-character ctype facet of
// the requested locale (en_US.UTF-8 by default), falling back to ASCII when
// the locale is not installed.
#include <locale>
#include <string>
#include <unordered_set>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

enum class CaseChange { kNone, kLower, kUpper };

std::u32string DecodeUtf8(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
    if (i + len > s.size()) len = 1;
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string EncodeUtf8(const std::u32string& s) {
  std::string out;
  for (char32_t cp : s) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  return out;
}

class StringNormalizer final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<StringNormalizer>(new StringNormalizer());
    const std::string action = info.AttrOr<std::string>("case_change_action", "NONE");
    if (action == "NONE") k->change_ = CaseChange::kNone;
    else if (action == "LOWER") k->change_ = CaseChange::kLower;
    else if (action == "UPPER") k->change_ = CaseChange::kUpper;
    else return info.Error(absl::StrCat("case_change_action '", action, "' is not one of NONE, LOWER, UPPER"));
    k->case_sensitive_ = info.AttrOr<int64_t>("is_case_sensitive", 0) != 0;
    std::string name = info.AttrOr<std::string>("locale", "");
    if (name.empty()) name = "en_US";
    for (const std::string& candidate : {name + ".UTF-8", name + ".utf8", name, std::string("C.UTF-8")}) {
      try {
        k->locale_ = std::locale(candidate.c_str());
        k->has_locale_ = true;
        break;
      } catch (const std::exception&) {
        // try the next spelling; ASCII mapping if none is installed
      }
    }
    for (const std::string& w : info.AttrOr<std::vector<std::string>>("stopwords", {})) {
      k->stopwords_.insert(k->case_sensitive_ ? w : k->Map(w, CaseChange::kLower));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    if (x.type() != DataType::kString) {
      return ctx.Error(absl::StrCat("input must be string, received ", DataTypeName(x.type())));
    }
    const bool two_d = x.rank() == 2;
    if (!(x.rank() == 1 || (two_d && x.dims()[0] == 1))) {
      return ctx.Error(absl::StrCat("input must have shape [C] or [1, C], received ", DimsToString(x.dims())));
    }
    std::vector<std::string> kept;
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if (!stopwords_.empty()) {
        const std::string key = case_sensitive_ ? in[i] : Map(in[i], CaseChange::kLower);
        if (stopwords_.count(key)) continue;
      }
      kept.push_back(change_ == CaseChange::kNone ? in[i] : Map(in[i], change_));
    }
    if (kept.empty()) kept.push_back("");
    const int64_t n = static_cast<int64_t>(kept.size());
    Dims dims = two_d ? Dims{1, n} : Dims{n};
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, dims, DataType::kString));
    for (int64_t i = 0; i < n; ++i) y->mutable_data<std::string>()[i] = std::move(kept[i]);
    return absl::OkStatus();
  }

 private:
  StringNormalizer() = default;

  std::string Map(const std::string& s, CaseChange change) const {
    std::u32string u = DecodeUtf8(s);
    const auto* ct = has_locale_ ? &std::use_facet<std::ctype<wchar_t>>(locale_) : nullptr;
    for (char32_t& c : u) {
      if (ct != nullptr) {
        const wchar_t w = static_cast<wchar_t>(c);
        c = static_cast<char32_t>(change == CaseChange::kLower ? ct->tolower(w) : ct->toupper(w));
      } else if (c < 0x80) {
        c = change == CaseChange::kLower ? std::tolower(static_cast<int>(c)) : std::toupper(static_cast<int>(c));
      }
    }
    return EncodeUtf8(u);
  }

  CaseChange change_ = CaseChange::kNone;
  bool case_sensitive_ = false;
  bool has_locale_ = false;
  std::locale locale_;
  std::unordered_set<std::string> stopwords_;
};

}  // namespace

void RegisterStringNormalizerKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("StringNormalizer").Since(10).Build(), MakeFactory<StringNormalizer>());
}

}  // namespace onyx
