// com.onyx TransposedMatMul(A, B), float:
//   Y = Transpose(alpha * MatMul(Transpose(A, perm_a), Transpose(B, perm_b)), perm_y)
// with numpy batch broadcasting between the two permuted operands (rank >= 2
// each). No transpose is materialised: each operand is read, and Y written,
// through the strides of its permuted view. Attention's head split and merge
// ([b, s, h, d] <-> [b, h, s, d]) and its key transpose run this way inside
// the score and context products.
//
// The whole batch is one oneDNN matmul over the strided views (its batched
// kernels, 20-40% faster than a loop of sgemm calls on attention's shapes),
// compiled once per shape and thread count; where oneDNN has only its
// reference implementation for the strides, one sgemm per batch matrix with
// the view's row stride as leading dimension (transposed when the view's
// rows, not its columns, are contiguous). A view whose inner two dimensions
// are both strided (a permutation the graph pass does not fold) is copied
// first.
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/kernel_scratch.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/gemm_util.h"
#include "providers/cpu/math/matmul_shape.h"
#include "providers/cpu/nn/dnnl_support.h"
#include "providers/cpu/tensor/copy_util.h"

namespace onyx {
namespace {

// A tensor seen through a permutation: view dims[i] = dims[perm[i]] with the
// source's row-major stride of that dimension.
struct View {
  Dims dims, strides;
};

View Permuted(const Dims& dims, const std::vector<int64_t>& perm) {
  const Dims strides = StridesOf(dims);
  View v;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t from = perm.empty() ? static_cast<int64_t>(i) : perm[i];
    v.dims.push_back(dims[from]);
    v.strides.push_back(strides[from]);
  }
  return v;
}

// How one batch matrix of a view [..., R, C] is handed to sgemm: as stored
// (columns contiguous) or transposed (rows contiguous), with its leading
// dimension; `strided` when neither holds.
struct MatrixAccess {
  bool transposed = false, strided = false;
  int64_t ld = 1;
};

MatrixAccess AccessOf(const View& v) {
  const size_t r = v.dims.size();
  const int64_t rows = v.dims[r - 2], cols = v.dims[r - 1];
  const int64_t row_stride = v.strides[r - 2], col_stride = v.strides[r - 1];
  // A dimension of extent 1 has any stride; the leading dimension must still
  // cover the other one (sgemm checks ld >= its row length).
  if (col_stride == 1 || cols == 1) return {false, false, rows == 1 ? std::max<int64_t>(cols, 1) : row_stride};
  if (row_stride == 1 || rows == 1) return {true, false, cols == 1 ? std::max<int64_t>(rows, 1) : col_stride};
  return {false, true, 0};
}

// Element offset of batch matrix `index` (row-major over the view's batch
// dims) in a view's storage.
int64_t BatchOffset(const View& v, int64_t index) {
  int64_t offset = 0;
  for (int64_t d = static_cast<int64_t>(v.dims.size()) - 3; d >= 0; --d) {
    offset += (index % v.dims[d]) * v.strides[d];
    index /= v.dims[d];
  }
  return offset;
}

// A dense copy of a view's elements (row-major over the view's dims).
Tensor Materialize(const float* data, const View& v, View& dense) {
  Tensor out = Tensor::Allocate(DataType::kFloat, v.dims);
  dense.dims = v.dims;
  dense.strides = StridesOf(v.dims);
  StridedCopy(DataType::kFloat, data, v.strides, out.mutable_raw(), dense.strides, v.dims);
  return out;
}

// The view's dims and strides as a oneDNN memory descriptor of `rank`
// dims, missing leading (broadcast) dims of extent 1 prepended. A dim of
// extent 1 takes the span of the whole view as its stride: any stride
// addresses it, but oneDNN's gemm-based kernels derive leading dimensions
// from every stride and refuse one shorter than a row.
dnnl::memory::desc StridedDesc(const View& v, size_t rank) {
  int64_t span = 1;
  for (size_t i = 0; i < v.dims.size(); ++i) span = std::max(span, v.dims[i] * v.strides[i]);
  dnnl::memory::dims dims(rank - v.dims.size(), 1), strides(rank - v.dims.size(), span);
  for (size_t i = 0; i < v.dims.size(); ++i) {
    dims.push_back(v.dims[i]);
    strides.push_back(v.dims[i] == 1 ? span : v.strides[i]);
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

// One shape's oneDNN matmul, or none (`primitive` empty) where oneDNN would
// run its reference implementation.
struct CompiledProduct {
  std::optional<dnnl::matmul> primitive;
  dnnl::memory::desc a, b, y, scratch;
};

absl::StatusOr<std::vector<int64_t>> ReadPerm(const OpKernelInfo& info, const char* name) {
  std::vector<int64_t> perm = info.AttrOr<std::vector<int64_t>>(name, {});
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i)) {
      return info.Error(absl::StrCat("attribute '", name, "' must be a permutation of 0..", perm.size() - 1,
                                     ", received [", absl::StrJoin(perm, ", "), "]"));
    }
  }
  return perm;
}

class TransposedMatMul final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(std::vector<int64_t> perm_a, ReadPerm(info, "perm_a"));
    ASSIGN_OR_RETURN(std::vector<int64_t> perm_b, ReadPerm(info, "perm_b"));
    ASSIGN_OR_RETURN(std::vector<int64_t> perm_y, ReadPerm(info, "perm_y"));
    return std::unique_ptr<OpKernel>(new TransposedMatMul(std::move(perm_a), std::move(perm_b), std::move(perm_y),
                                                          info.AttrOr<float>("alpha", 1.f)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* a, RequireInput(ctx, 0, "A"));
    ASSIGN_OR_RETURN(const Tensor* b, RequireInput(ctx, 1, "B"));
    if (a->type() != DataType::kFloat || b->type() != DataType::kFloat) {
      return ctx.Error(
          absl::StrCat("A and B must be float, received ", DataTypeName(a->type()), " and ", DataTypeName(b->type())));
    }
    RETURN_IF_ERROR(CheckRank(ctx, "A", "perm_a", *a, perm_a_));
    RETURN_IF_ERROR(CheckRank(ctx, "B", "perm_b", *b, perm_b_));
    View va = Permuted(a->dims(), perm_a_), vb = Permuted(b->dims(), perm_b_);
    auto shape = MatMulShape::Make(va.dims, vb.dims);
    if (!shape.ok()) return ctx.Error(shape.status().message());
    const MatMulShape& s = *shape;
    const int64_t rank = static_cast<int64_t>(s.out.size());
    if (!perm_y_.empty() && static_cast<int64_t>(perm_y_.size()) != rank) {
      return ctx.Error(absl::StrCat("perm_y has ", perm_y_.size(), " entries, the product ", DimsToString(s.out),
                                    " has rank ", rank));
    }
    // Y = Transpose(P, perm_y): Y's dim j is P's dim perm_y[j], so P's dim
    // perm_y[j] is stored with Y's stride j.
    Dims y_dims(rank), p_strides(rank);
    for (int64_t j = 0; j < rank; ++j) y_dims[j] = s.out[perm_y_.empty() ? j : perm_y_[j]];
    const Dims y_strides = StridesOf(y_dims);
    for (int64_t j = 0; j < rank; ++j) p_strides[perm_y_.empty() ? j : perm_y_[j]] = y_strides[j];
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, y_dims, DataType::kFloat));
    if (y->num_elements() == 0) return absl::OkStatus();
    float* py = y->mutable_data<float>();
    if (s.k == 0) {
      std::fill(py, py + y->num_elements(), 0.f);
      return absl::OkStatus();
    }

    const float* pa = a->data<float>();
    const float* pb = b->data<float>();
    ASSIGN_OR_RETURN(std::shared_ptr<const CompiledProduct> compiled, Compile(va, vb, View{s.out, p_strides}));
    if (compiled->primitive.has_value()) {
      absl::Status status = DnnlGuarded("strided matmul", [&]() -> absl::Status {
        ApplyThreadSettings();
        const dnnl::engine& engine = DnnlCpuEngine();
        void* pad = KernelScratchBytes(kScratchPrimitive, compiled->scratch.get_size());
        if (pad == nullptr && compiled->scratch.get_size() > 0) {
          return absl::ResourceExhaustedError("no memory for the matmul's scratchpad");
        }
        dnnl::stream& stream = DnnlThreadStream();
        compiled->primitive->execute(stream,
                                     {{DNNL_ARG_SRC, dnnl::memory(compiled->a, engine, const_cast<float*>(pa))},
                                      {DNNL_ARG_WEIGHTS, dnnl::memory(compiled->b, engine, const_cast<float*>(pb))},
                                      {DNNL_ARG_DST, dnnl::memory(compiled->y, engine, py)},
                                      {DNNL_ARG_SCRATCHPAD, dnnl::memory(compiled->scratch, engine, pad)}});
        stream.wait();
        return absl::OkStatus();
      });
      // A primitive that refuses these pointers' strides at run time leaves
      // the product to the sgemm path below.
      if (status.ok()) return status;
    }
    // An operand with no unit-stride row or column is copied dense first.
    auto accessible = [](const float*& data, View& view, Tensor& copy) {
      MatrixAccess access = AccessOf(view);
      if (!access.strided) return access;
      View dense;
      copy = Materialize(data, view, dense);
      view = dense;
      data = copy.data<float>();
      return AccessOf(view);
    };
    Tensor a_copy, b_copy;
    const MatrixAccess ma = accessible(pa, va, a_copy), mb = accessible(pb, vb, b_copy);
    View vp{s.out, p_strides};
    MatrixAccess mp = AccessOf(vp);
    Tensor p_dense;  // the product, when Y's permutation leaves no contiguous row
    float* pp = py;
    if (mp.strided || mp.transposed) {
      p_dense = Tensor::Allocate(DataType::kFloat, s.out);
      pp = p_dense.mutable_data<float>();
      vp.strides = StridesOf(s.out);
      mp = AccessOf(vp);
    }

    // One B and A's matrices back to back, as is the product: one product
    // over all of A's rows.
    if (s.b_shared && !ma.transposed && va.strides == StridesOf(va.dims) && pp == py && perm_y_.empty()) {
      return Sgemm(false, mb.transposed, s.batches * s.m, s.n, s.k, alpha_, pa, s.k, pb, mb.ld, 0.f, py, s.n);
    }
    auto one = [&](int64_t i) {
      return Sgemm(ma.transposed, mb.transposed, s.m, s.n, s.k, alpha_, pa + BatchOffset(va, s.a_offset[i]), ma.ld,
                   pb + BatchOffset(vb, s.b_offset[i]), mb.ld, 0.f, pp + BatchOffset(vp, i), mp.ld);
    };
    // Attention's products: many small independent ones, each on one thread.
    const int threads = IntraOpThreads();
    if (threads > 1 && (s.batches >= 2 * threads || s.batches % threads == 0)) {
      std::vector<absl::Status> status(s.batches);
      ParallelFor(s.batches, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) status[i] = one(i);
      });
      for (const absl::Status& st : status) RETURN_IF_ERROR(st);
    } else {
      for (int64_t i = 0; i < s.batches; ++i) RETURN_IF_ERROR(one(i));
    }
    if (pp != py) {
      StridedCopy(DataType::kFloat, pp, StridesOf(s.out), py, p_strides, s.out);
    }
    return absl::OkStatus();
  }

 private:
  TransposedMatMul(std::vector<int64_t> perm_a, std::vector<int64_t> perm_b, std::vector<int64_t> perm_y, float alpha)
      : perm_a_(std::move(perm_a)), perm_b_(std::move(perm_b)), perm_y_(std::move(perm_y)), alpha_(alpha) {}

  // The product for these views on the calling thread's intra-op thread
  // count, compiled on first use; kMaxCompiled shapes are kept, further
  // ones compile on every call.
  static constexpr size_t kMaxCompiled = 32;
  absl::StatusOr<std::shared_ptr<const CompiledProduct>> Compile(const View& a, const View& b, const View& y) const {
    auto key = std::make_tuple(a.dims, b.dims, IntraOpThreads());
    {
      absl::MutexLock lock(&mu_);
      auto it = compiled_.find(key);
      if (it != compiled_.end()) return it->second;
    }
    auto compiled = std::make_shared<CompiledProduct>();
    absl::Status status = DnnlGuarded("strided matmul", [&]() -> absl::Status {
      ApplyThreadSettings();
      const size_t rank = y.dims.size();
      compiled->a = StridedDesc(a, rank);
      compiled->b = StridedDesc(b, rank);
      compiled->y = StridedDesc(y, rank);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      if (alpha_ != 1.f) attr.set_output_scales(0, {alpha_});
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(compiled->a, compiled->b, compiled->y), attr, DnnlCpuEngine());
      if (std::string_view(pd.impl_info_str()).substr(0, 3) != "ref") {
        compiled->scratch = pd.scratchpad_desc();
        compiled->primitive.emplace(pd);
      }
      return absl::OkStatus();
    });
    // Shapes oneDNN refuses run on the sgemm path too.
    if (!status.ok() && !absl::IsUnimplemented(status)) return status;
    absl::MutexLock lock(&mu_);
    if (compiled_.size() < kMaxCompiled) compiled_.emplace(key, compiled);
    return std::shared_ptr<const CompiledProduct>(compiled);
  }

  static absl::Status CheckRank(const OpKernelContext& ctx, const char* name, const char* perm_name, const Tensor& t,
                                const std::vector<int64_t>& perm) {
    if (t.rank() < 2) {
      return ctx.Error(absl::StrCat(name, " must have rank >= 2, received ", DimsToString(t.dims())));
    }
    if (!perm.empty() && static_cast<int64_t>(perm.size()) != t.rank()) {
      return ctx.Error(
          absl::StrCat(perm_name, " has ", perm.size(), " entries, ", name, " has shape ", DimsToString(t.dims())));
    }
    return absl::OkStatus();
  }

  std::vector<int64_t> perm_a_, perm_b_, perm_y_;  // empty: identity
  float alpha_;
  mutable absl::Mutex mu_;
  mutable std::map<std::tuple<Dims, Dims, int>, std::shared_ptr<const CompiledProduct>> compiled_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void RegisterTransposedMatMulKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("TransposedMatMul").Domain(kOnyxDomain).Build(), MakeFactory<TransposedMatMul>());
}

}  // namespace onyx
