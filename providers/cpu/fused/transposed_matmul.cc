// com.onyx TransposedMatMul(A, B), float:
//   Y = Transpose(alpha * MatMul(Transpose(A, perm_a), Transpose(B, perm_b)), perm_y)
// with numpy batch broadcasting between the two permuted operands (rank >= 2
// each). No transpose is materialised: each operand is read, and Y written,
// through the strides of its permuted view, one sgemm per batch matrix with
// the view's row stride as leading dimension (transposed when the view's
// rows, not its columns, are contiguous). Attention's head split and merge
// ([b, s, h, d] <-> [b, h, s, d]) and its key transpose run this way inside
// the score and context products. A view whose inner two dimensions are both
// strided (a permutation the graph pass does not fold) is copied first.
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/gemm_util.h"
#include "providers/cpu/math/matmul_shape.h"
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
    Tensor a_copy, b_copy;
    MatrixAccess ma = AccessOf(va), mb = AccessOf(vb);
    if (ma.strided) {
      View dense;
      a_copy = Materialize(pa, va, dense);
      va = dense;
      pa = a_copy.data<float>();
      ma = AccessOf(va);
    }
    if (mb.strided) {
      View dense;
      b_copy = Materialize(pb, vb, dense);
      vb = dense;
      pb = b_copy.data<float>();
      mb = AccessOf(vb);
    }
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
};

}  // namespace

void RegisterTransposedMatMulKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("TransposedMatMul").Domain(kOnyxDomain).Build(), MakeFactory<TransposedMatMul>());
}

}  // namespace onyx
