// Einsum: parses the equation (explicit or implicit output, ellipsis with
// broadcasting, repeated labels as diagonals) and evaluates it as one loop over
// the output positions and, inside, an odometer over the contracted labels.
#include <map>

#include "absl/strings/str_split.h"
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"

namespace onyx {
namespace {

// Ellipsis dims are labels 256.. so they never collide with letters.
constexpr int kEllipsisBase = 256;

struct Term {
  std::vector<int> labels;  // after ellipsis expansion, one per input dim
};

struct Equation {
  std::vector<std::string> inputs;
  std::string output;
  bool explicit_output = false;
};

absl::StatusOr<Equation> Split(std::string eq) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  Equation e;
  std::string lhs = eq;
  size_t arrow = eq.find("->");
  if (arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    e.output = eq.substr(arrow + 2);
    e.explicit_output = true;
  }
  e.inputs = absl::StrSplit(lhs, ',');
  return e;
}

// Expands one term for an input of `rank` dims; `ellipsis_rank` receives the
// number of dims the ellipsis covers.
absl::StatusOr<std::vector<int>> ParseTerm(const std::string& term, int64_t rank, int64_t* ellipsis_rank) {
  std::vector<int> letters;
  int64_t ellipsis_at = -1;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (ellipsis_at >= 0) return absl::InvalidArgumentError("term '" + term + "' has more than one ellipsis");
      ellipsis_at = static_cast<int64_t>(letters.size());
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      letters.push_back(term[i]);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("invalid character '", std::string(1, term[i]), "' in '", term, "'"));
    }
  }
  const int64_t n = static_cast<int64_t>(letters.size());
  *ellipsis_rank = ellipsis_at >= 0 ? rank - n : 0;
  if (rank < n || (ellipsis_at < 0 && rank != n)) {
    return absl::InvalidArgumentError(absl::StrCat("term '", term, "' has ", n, " labels for an input of rank ", rank));
  }
  return letters;
}

class Einsum final : public OpKernel {
 public:
  explicit Einsum(const OpKernelInfo& info) : equation_(info.AttrOr<std::string>("equation", "")) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    auto eq = Split(equation_);
    if (!eq.ok()) return ctx.Error(eq.status().message());
    const int n = ctx.InputCount();
    if (static_cast<int>(eq->inputs.size()) != n) {
      return ctx.Error(absl::StrCat("equation '", equation_, "' has ", eq->inputs.size(), " terms for ", n, " inputs"));
    }
    std::vector<Tensor> inputs;
    std::vector<Term> terms(n);
    int64_t max_ellipsis = 0;
    std::vector<int64_t> ellipsis_ranks(n);
    std::vector<std::vector<int>> letters(n);
    for (int i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(const Tensor* t, RequireInput(ctx, i, absl::StrCat("Inputs[", i, "]")));
      if (i > 0 && t->type() != inputs[0].type() && UpcastToFloat(*t).type() != inputs[0].type()) {
        return ctx.Error(absl::StrCat("input ", i, " has type ", DataTypeName(t->type()), ", input 0 differs"));
      }
      inputs.push_back(UpcastToFloat(*t));
      auto l = ParseTerm(eq->inputs[i], t->rank(), &ellipsis_ranks[i]);
      if (!l.ok()) return ctx.Error(l.status().message());
      letters[i] = *l;
      max_ellipsis = std::max(max_ellipsis, ellipsis_ranks[i]);
    }
    // Expand terms and collect label sizes.
    std::map<int, int64_t> size;
    std::map<int, int> count;  // occurrences of each label over all terms
    for (int i = 0; i < n; ++i) {
      const std::string& term = eq->inputs[i];
      const size_t at = term.find("...");
      const size_t before = at == std::string::npos ? letters[i].size() : static_cast<size_t>(
          std::count_if(term.begin(), term.begin() + at, [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }));
      std::vector<int>& labels = terms[i].labels;
      labels.assign(letters[i].begin(), letters[i].begin() + before);
      for (int64_t e = 0; e < ellipsis_ranks[i]; ++e) labels.push_back(kEllipsisBase + max_ellipsis - ellipsis_ranks[i] + e);
      labels.insert(labels.end(), letters[i].begin() + before, letters[i].end());
      for (size_t d = 0; d < labels.size(); ++d) {
        const int64_t dim = inputs[i].dims()[d];
        auto it = size.find(labels[d]);
        if (it == size.end()) {
          size[labels[d]] = dim;
        } else if (dim != it->second) {
          if (labels[d] < kEllipsisBase || (dim != 1 && it->second != 1)) {
            return ctx.Error(absl::StrCat("dimension ", d, " of input ", i, " is ", dim, ", expected ", it->second));
          }
          it->second = std::max(dim, it->second);
        }
      }
      for (int l : labels) count[l] += 1;
    }
    // Output labels.
    std::vector<int> out_labels;
    for (int64_t e = 0; e < max_ellipsis; ++e) {
      if (!eq->explicit_output) out_labels.push_back(kEllipsisBase + e);
    }
    if (eq->explicit_output) {
      const std::string& o = eq->output;
      std::vector<int> ol;
      for (size_t i = 0; i < o.size(); ++i) {
        if (o.compare(i, 3, "...") == 0) {
          for (int64_t e = 0; e < max_ellipsis; ++e) ol.push_back(kEllipsisBase + e);
          i += 2;
        } else if (std::isalpha(static_cast<unsigned char>(o[i]))) {
          if (!size.count(o[i])) return ctx.Error(absl::StrCat("output label '", std::string(1, o[i]), "' is not in any input"));
          ol.push_back(o[i]);
        } else {
          return ctx.Error(absl::StrCat("invalid character '", std::string(1, o[i]), "' in output '", o, "'"));
        }
      }
      out_labels = ol;
    } else {
      // Implicit output: labels used exactly once, in alphabetical order.
      for (const auto& [label, c] : count) {
        if (label < kEllipsisBase && c == 1) out_labels.push_back(label);
      }
    }
    std::vector<int> sum_labels;
    for (const auto& [label, s] : size) {
      if (std::find(out_labels.begin(), out_labels.end(), label) == out_labels.end()) sum_labels.push_back(label);
    }
    // Strides of every label in every input (summed for repeated labels).
    const size_t no = out_labels.size(), ns = sum_labels.size();
    std::vector<std::vector<int64_t>> out_strides(n, std::vector<int64_t>(no)), sum_strides(n, std::vector<int64_t>(ns));
    for (int i = 0; i < n; ++i) {
      const auto& labels = terms[i].labels;
      int64_t stride = 1;
      for (int64_t d = static_cast<int64_t>(labels.size()) - 1; d >= 0; --d) {
        const int64_t dim = inputs[i].dims()[d];
        const int64_t s = dim == 1 ? 0 : stride;
        auto oi = std::find(out_labels.begin(), out_labels.end(), labels[d]);
        if (oi != out_labels.end()) out_strides[i][oi - out_labels.begin()] += s;
        auto si = std::find(sum_labels.begin(), sum_labels.end(), labels[d]);
        if (si != sum_labels.end()) sum_strides[i][si - sum_labels.begin()] += s;
        stride *= dim;
      }
    }
    Dims out_dims;
    for (int l : out_labels) out_dims.push_back(size[l]);
    std::vector<int64_t> sum_sizes;
    int64_t sum_total = 1;
    for (int l : sum_labels) {
      sum_sizes.push_back(size[l]);
      sum_total *= size[l];
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, ctx.Input(0)->type()));
    Tensor yf = IsHalfLike(y->type()) ? Tensor::Allocate(DataType::kFloat, out_dims) : *y;
    absl::Status s = DispatchList(NumericCompute{}, inputs[0].type(), [&](auto tag) {
      using T = decltype(tag);
      using A = std::conditional_t<std::is_floating_point_v<T>, double, T>;
      std::vector<const T*> ptr(n);
      for (int i = 0; i < n; ++i) ptr[i] = inputs[i].data<T>();
      T* py = yf.mutable_data<T>();
      ParallelFor(yf.num_elements(), std::max<int64_t>(1, 4096 / std::max<int64_t>(1, sum_total)),
                  [&](int64_t begin, int64_t end) {
        std::vector<int64_t> base(n), off(n), idx(ns);
        for (int64_t o = begin; o < end; ++o) {
          int64_t rem = o;
          std::fill(base.begin(), base.end(), 0);
          for (int64_t d = static_cast<int64_t>(no) - 1; d >= 0; --d) {
            const int64_t v = rem % out_dims[d];
            rem /= out_dims[d];
            for (int i = 0; i < n; ++i) base[i] += v * out_strides[i][d];
          }
          A acc = 0;
          if (sum_total > 0) {
            off = base;
            std::fill(idx.begin(), idx.end(), 0);
            for (int64_t c = 0; c < sum_total; ++c) {
              A prod = 1;
              for (int i = 0; i < n; ++i) prod = static_cast<A>(prod * static_cast<A>(ptr[i][off[i]]));
              acc = static_cast<A>(acc + prod);
              for (int64_t d = static_cast<int64_t>(ns) - 1; d >= 0; --d) {
                ++idx[d];
                for (int i = 0; i < n; ++i) off[i] += sum_strides[i][d];
                if (idx[d] < sum_sizes[d]) break;
                for (int i = 0; i < n; ++i) off[i] -= idx[d] * sum_strides[i][d];
                idx[d] = 0;
              }
            }
          }
          py[o] = static_cast<T>(acc);
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(y->type())) DowncastFromFloat(yf, *y);
    return absl::OkStatus();
  }

 private:
  std::string equation_;
};

}  // namespace

void RegisterEinsumKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Einsum").Since(12).Build(), MakeFactory<Einsum>());
}

}  // namespace onyx
