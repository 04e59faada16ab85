// com.microsoft EmbedLayerNormalization, float: BERT's embedding layer.
//
//   e[b, s] = word[input_ids[b, s]] + position[p(b, s)] + segment[segment_ids[b, s]]
//   output[b, s] = (e - mean) / sqrt(var + epsilon) * gamma + beta
//   mask_index[b] = number of ones in mask[b] (0 without a mask)
//   embedding_sum = e
//
// p(b, s) is position_ids[b, s] (or [0, s] when its batch dimension is 1),
// else s; the segment term is absent without segment_ids. An id outside its
// table is an error (ONNX Runtime: "input index out of range").
#include <atomic>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/contrib/norm_util.h"

namespace onyx {
namespace {

absl::StatusOr<const Tensor*> Int32Input(const OpKernelContext& ctx, int i, const char* name, const Dims& dims,
                                         bool broadcast_batch = false) {
  const Tensor* t = ctx.Input(i);
  if (t == nullptr) return t;
  const bool shape_ok = t->dims() == dims || (broadcast_batch && dims.size() == 2 && t->dims() == Dims{1, dims[1]});
  if (t->type() != DataType::kInt32 || !shape_ok) {
    return ctx.Error(absl::StrCat(name, " must be int32 ", DimsToString(dims), ", received ", DataTypeName(t->type()),
                                  " ", DimsToString(t->dims())));
  }
  return t;
}

absl::Status RequireTable(const OpKernelContext& ctx, const Tensor* t, const char* name, int64_t hidden) {
  if (t == nullptr || (t->rank() == 2 && t->dims()[1] == hidden)) return absl::OkStatus();
  return ctx.Error(absl::StrCat(name, " must be 2-D (rows, ", hidden, "), received ", DimsToString(t->dims())));
}

class EmbedLayerNorm final : public OpKernel {
 public:
  explicit EmbedLayerNorm(const OpKernelInfo& info) : epsilon_(info.AttrOr<float>("epsilon", 1e-12f)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* ids = ctx.Input(0);
    if (ids == nullptr || ids->type() != DataType::kInt32 || ids->rank() != 2) {
      return ctx.Error("input_ids must be int32 (batch, sequence)" +
                       (ids ? ", received " + DimsToString(ids->dims()) : std::string()));
    }
    const Dims& id_dims = ids->dims();
    ASSIGN_OR_RETURN(const Tensor* word, FloatInput(ctx, 2, "word_embedding"));
    ASSIGN_OR_RETURN(const Tensor* position, FloatInput(ctx, 3, "position_embedding"));
    const Tensor* segment = nullptr;
    if (ctx.Input(4) != nullptr) {
      ASSIGN_OR_RETURN(segment, FloatInput(ctx, 4, "segment_embedding"));
    }
    ASSIGN_OR_RETURN(const Tensor* gamma, FloatInput(ctx, 5, "gamma"));
    ASSIGN_OR_RETURN(const Tensor* beta, FloatInput(ctx, 6, "beta"));
    ASSIGN_OR_RETURN(const Tensor* segment_ids, Int32Input(ctx, 1, "segment_ids", id_dims));
    ASSIGN_OR_RETURN(const Tensor* mask, Int32Input(ctx, 7, "mask", id_dims));
    ASSIGN_OR_RETURN(const Tensor* position_ids, Int32Input(ctx, 8, "position_ids", id_dims, true));
    if (word->rank() != 2) return ctx.Error("word_embedding must be 2-D, received " + DimsToString(word->dims()));
    const int64_t hidden = word->dims()[1];
    RETURN_IF_ERROR(RequireTable(ctx, position, "position_embedding", hidden));
    RETURN_IF_ERROR(RequireTable(ctx, segment, "segment_embedding", hidden));
    if ((segment == nullptr) != (segment_ids == nullptr)) {
      return ctx.Error("segment_ids and segment_embedding must be given together");
    }
    RETURN_IF_ERROR(RequireVector(ctx, *gamma, "gamma", hidden));
    RETURN_IF_ERROR(RequireVector(ctx, *beta, "beta", hidden));

    const int64_t batch = id_dims[0], seq = id_dims[1];
    ASSIGN_OR_RETURN(Tensor* output, ctx.Output(0, {batch, seq, hidden}, DataType::kFloat));
    float* sum_out = nullptr;
    if (ctx.OutputCount() > 2 && ctx.OutputRequested(2)) {
      ASSIGN_OR_RETURN(Tensor* t, ctx.Output(2, {batch, seq, hidden}, DataType::kFloat));
      sum_out = t->mutable_data<float>();
    }
    const int32_t* pid = ids->data<int32_t>();
    const int32_t* pseg = segment_ids ? segment_ids->data<int32_t>() : nullptr;
    const int32_t* ppos = position_ids ? position_ids->data<int32_t>() : nullptr;
    const bool pos_shared = position_ids != nullptr && position_ids->dims()[0] == 1 && batch != 1;
    const int64_t words = word->dims()[0], positions = position->dims()[0];
    const int64_t segments = segment ? segment->dims()[0] : 0;
    const float* pw = word->data<float>();
    const float* pp = position->data<float>();
    const float* ps = segment ? segment->data<float>() : nullptr;
    const float* pg = gamma->data<float>();
    const float* pb = beta->data<float>();
    float* py = output->mutable_data<float>();
    const float eps = epsilon_;
    std::atomic<bool> out_of_range{false};
    ParallelFor(batch * seq, std::max<int64_t>(1, 4096 / std::max<int64_t>(hidden, 1)),
                [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t w = pid[t];
        const int64_t p = ppos ? ppos[pos_shared ? t % seq : t] : t % seq;
        const int64_t g = pseg ? pseg[t] : 0;
        if (w < 0 || w >= words || p < 0 || p >= positions || (ps != nullptr && (g < 0 || g >= segments))) {
          out_of_range = true;
          continue;
        }
        float* y = py + t * hidden;
        const float* wr = pw + w * hidden;
        const float* pr = pp + p * hidden;
        if (ps != nullptr) {
          const float* sr = ps + g * hidden;
          for (int64_t i = 0; i < hidden; ++i) y[i] = wr[i] + pr[i] + sr[i];
        } else {
          for (int64_t i = 0; i < hidden; ++i) y[i] = wr[i] + pr[i];
        }
        if (sum_out != nullptr) std::copy(y, y + hidden, sum_out + t * hidden);
        float mean, m2;
        RowMeanM2(y, hidden, &mean, &m2);
        NormalizeRow(y, hidden, mean, 1.f / std::sqrt(m2 / static_cast<float>(hidden) + eps), pg, pb, y);
      }
    });
    if (out_of_range) {
      return ctx.Error(absl::StrCat("an id is out of range (word_embedding has ", words, " rows, position_embedding ",
                                    positions, ", segment_embedding ", segments, ")"));
    }
    if (ctx.OutputCount() > 1 && ctx.OutputRequested(1)) {
      ASSIGN_OR_RETURN(Tensor* mask_index, ctx.Output(1, {batch}, DataType::kInt32));
      int32_t* pm = mask_index->mutable_data<int32_t>();
      for (int64_t b = 0; b < batch; ++b) {
        int32_t ones = 0;
        if (mask != nullptr) {
          const int32_t* row = mask->data<int32_t>() + b * seq;
          for (int64_t s = 0; s < seq; ++s) ones += row[s] == 1;
        }
        pm[b] = ones;
      }
    }
    return absl::OkStatus();
  }

 private:
  float epsilon_;
};

}  // namespace

void RegisterEmbedLayerNormKernels(KernelRegistry& r) {
  r.Register(MicrosoftFloatKernel("EmbedLayerNormalization"), MakeFactory<EmbedLayerNorm>());
}

}  // namespace onyx
