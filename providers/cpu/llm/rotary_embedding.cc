// RotaryEmbedding (opset 23). X is [batch, heads, seq, head_size] or [batch,
// seq, heads * head_size] (num_heads given); the first rotary_embedding_dim
// values of each head (all by default) are rotated by the angle whose cosine
// and sine the caches hold, looked up by position_ids ([batch, seq] rows of
// [max_position, dim/2] caches) or, without them, read from [batch, seq,
// dim/2] caches. Pairs are the two halves of the rotated part (x_i, x_{i+d/2})
// or, interleaved, neighbours (x_2i, x_2i+1). float16 and bfloat16 compute in
// float. Caches wider than dim/2 are read in their first dim/2 columns, as
// onnx's function body slices them.
#include <cstring>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/llm/llm_kernels.h"
#include "providers/cpu/math/element_util.h"

namespace onyx {
namespace {

class RotaryEmbedding final : public OpKernel {
 public:
  explicit RotaryEmbedding(const OpKernelInfo& info)
      : interleaved_(info.AttrOr<int64_t>("interleaved", 0) != 0),
        num_heads_(info.AttrOr<int64_t>("num_heads", 0)),
        rotary_dim_(info.AttrOr<int64_t>("rotary_embedding_dim", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* cos, RequireInput(ctx, 1, "cos_cache"));
    ASSIGN_OR_RETURN(const Tensor* sin, RequireInput(ctx, 2, "sin_cache"));
    const Tensor* pos = ctx.Input(3);
    ASSIGN_OR_RETURN(Geometry g, Shape(ctx, *x, *cos, *sin, pos));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
    if (x->num_elements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(Tensor xf, ConvertNumeric(*x, DataType::kFloat));
    ASSIGN_OR_RETURN(Tensor cf, ConvertNumeric(*cos, DataType::kFloat));
    ASSIGN_OR_RETURN(Tensor sf, ConvertNumeric(*sin, DataType::kFloat));
    Tensor yf = x->type() == DataType::kFloat ? *y : Tensor::Allocate(DataType::kFloat, x->dims());
    std::vector<int64_t> rows(g.batch * g.seq);  // cache row of each (batch, seq)
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t s = 0; s < g.seq; ++s) {
        int64_t row = (g.cache_batch == 1 ? 0 : b) * g.seq + s;
        if (pos != nullptr) {
          row = pos->data<int64_t>()[(pos->dims()[0] == 1 ? 0 : b) * g.seq + s];
          if (row < 0 || row >= g.cache_rows) {
            return ctx.Error(absl::StrCat("position_ids value ", row, " at [", b, ", ", s, "] is out of range [0, ",
                                          g.cache_rows, ")"));
          }
        }
        rows[b * g.seq + s] = row;
      }
    }
    Rotate(g, rows, xf.data<float>(), cf.data<float>(), sf.data<float>(), yf.mutable_data<float>());
    if (x->type() == DataType::kFloat) return absl::OkStatus();
    DowncastFromFloat(yf, *y);
    return absl::OkStatus();
  }

 private:
  struct Geometry {
    bool four_d = false;
    int64_t batch = 0, seq = 0, heads = 0, head_size = 0, rotary = 0;
    int64_t cache_rows = 0, cache_width = 0, cache_batch = 1;
  };

  absl::StatusOr<Geometry> Shape(const OpKernelContext& ctx, const Tensor& x, const Tensor& cos, const Tensor& sin,
                                 const Tensor* pos) const {
    Geometry g;
    if (x.rank() == 4) {
      g.four_d = true;
      g.batch = x.dims()[0], g.heads = x.dims()[1], g.seq = x.dims()[2], g.head_size = x.dims()[3];
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0 || x.dims()[2] % num_heads_ != 0) {
        return ctx.Error(absl::StrCat("3-D input ", DimsToString(x.dims()), " needs num_heads dividing its last ",
                                      "dimension, received num_heads ", num_heads_));
      }
      g.batch = x.dims()[0], g.seq = x.dims()[1], g.heads = num_heads_, g.head_size = x.dims()[2] / num_heads_;
    } else {
      return ctx.Error(absl::StrCat("X must have rank 3 or 4, received ", DimsToString(x.dims())));
    }
    g.rotary = rotary_dim_ > 0 ? rotary_dim_ : g.head_size;
    if (g.rotary > g.head_size || g.rotary % 2 != 0) {
      return ctx.Error(
          absl::StrCat("rotary_embedding_dim ", g.rotary, " must be even and at most the head size ", g.head_size));
    }
    if (cos.dims() != sin.dims()) {
      return ctx.Error(
          absl::StrCat("cos_cache ", DimsToString(cos.dims()), " and sin_cache ", DimsToString(sin.dims()), " differ"));
    }
    if (cos.type() != x.type() || sin.type() != x.type()) return ctx.Error("caches must have X's element type");
    if (pos != nullptr) {
      if (pos->type() != DataType::kInt64 || pos->rank() != 2 || pos->dims()[1] != g.seq ||
          (pos->dims()[0] != g.batch && pos->dims()[0] != 1)) {
        return ctx.Error(absl::StrCat("position_ids must be int64 [", g.batch, ", ", g.seq, "], received ",
                                      DataTypeName(pos->type()), " ", DimsToString(pos->dims())));
      }
      if (cos.rank() != 2) {
        return ctx.Error(absl::StrCat("with position_ids the caches must be 2-D, received ", DimsToString(cos.dims())));
      }
      g.cache_rows = cos.dims()[0];
    } else {
      if (cos.rank() != 3 || cos.dims()[1] != g.seq || (cos.dims()[0] != g.batch && cos.dims()[0] != 1)) {
        return ctx.Error(absl::StrCat("without position_ids the caches must be [", g.batch, ", ", g.seq,
                                      ", dim/2], received ", DimsToString(cos.dims())));
      }
      g.cache_batch = cos.dims()[0];
      g.cache_rows = cos.dims()[0] * g.seq;
    }
    g.cache_width = cos.dims().back();
    if (g.cache_width < g.rotary / 2) {
      return ctx.Error(
          absl::StrCat("caches have ", g.cache_width, " columns, fewer than rotary dim / 2 = ", g.rotary / 2));
    }
    return g;
  }

  void Rotate(const Geometry& g, const std::vector<int64_t>& rows, const float* x, const float* cos, const float* sin,
              float* y) const {
    const int64_t half = g.rotary / 2;
    ParallelFor(g.batch * g.seq * g.heads, std::max<int64_t>(1, 2048 / g.head_size), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t h = i % g.heads, bs = i / g.heads, b = bs / g.seq, s = bs % g.seq;
        const int64_t offset = (g.four_d ? (b * g.heads + h) * g.seq + s : (b * g.seq + s) * g.heads + h) * g.head_size;
        const float* in = x + offset;
        float* out = y + offset;
        const float* c = cos + rows[bs] * g.cache_width;
        const float* sn = sin + rows[bs] * g.cache_width;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = interleaved_ ? 2 * k : k, i2 = interleaved_ ? 2 * k + 1 : k + half;
          const float x1 = in[i1], x2 = in[i2];
          out[i1] = c[k] * x1 - sn[k] * x2;
          out[i2] = sn[k] * x1 + c[k] * x2;
        }
        std::memcpy(out + g.rotary, in + g.rotary, (g.head_size - g.rotary) * sizeof(float));
      }
    });
  }

  bool interleaved_;
  int64_t num_heads_;
  int64_t rotary_dim_;
};

}  // namespace

void RegisterRotaryEmbeddingKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("RotaryEmbedding").Since(23).Build(), MakeFactory<RotaryEmbedding>());
}

}  // namespace onyx
